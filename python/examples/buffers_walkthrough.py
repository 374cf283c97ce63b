"""The first program most PyOpenCL users write — add two vectors with a kernel — in clarray.

Step 1 does it the buffer way (host arrays, device buffers, enqueue_copy, a program, a launch,
a copy back); step 2 does the same with device arrays, where the data stays on the device and
`a + b` is one generated kernel. Both are checked against NumPy.

    python3 python/examples/buffers_walkthrough.py [n]
"""
import sys

import numpy as np

import clarray as cl


def main(n=50_000):
    rng = np.random.default_rng(0)
    a_host = rng.random(n, dtype=np.float32)
    b_host = rng.random(n, dtype=np.float32)
    queue = cl.Queue()
    print(f"device: {queue.context.device_name}")

    # Step 1: buffers and copies (bytes only; the kernel gives them meaning).
    a_buf, b_buf, out_buf = (cl.Buffer(a_host.nbytes) for _ in range(3))
    cl.enqueue_copy(queue, a_buf, a_host)
    cl.enqueue_copy(queue, b_buf, b_host)
    program = cl.Program(
        """
        kernel void add(global const float* a, global const float* b, global float* out, uint n) {
            size_t i = get_global_id(0);
            if (i < n) out[i] = a[i] + b[i];
        }
        """
    )
    # Global size n, work-group size chosen by clarray; arguments are checked against the
    # kernel's parameters (a float64 for `uint n` or a missing argument is an error).
    program.add(queue, (n,), None, a_buf, b_buf, out_buf, np.uint32(n))
    out_host = np.empty_like(a_host)
    cl.enqueue_copy(queue, out_host, out_buf)  # blocking: waits for the kernel first
    np.testing.assert_array_equal(out_host, a_host + b_host)
    print(f"buffers: {n} sums equal NumPy's")

    # Step 2: device arrays: the same sum, and a longer expression fused into one kernel.
    a, b = cl.asarray(a_host), cl.asarray(b_host)
    np.testing.assert_array_equal((a + b).get(), a_host + b_host)
    axpb = cl.fuse(lambda x, y: 2 * x * y + 1)
    np.testing.assert_allclose(axpb(a, b).get(), 2 * a_host * b_host + 1, rtol=1e-6)
    print(f"arrays: a + b and the fused 2*a*b + 1 equal NumPy's; sum = {float(a.sum()):.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
