//! A guide for PyOpenCL and NumPy users (written below).
