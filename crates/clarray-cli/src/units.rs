//! Output shared by the commands: byte sizes, the date, and printing that survives a closed
//! pipe (`clarray devices --json | head`).

use std::io::Write;

/// Writes `text` to standard output. A reader that went away (a closed pipe) is not an error
/// worth a panic, so that ends the output quietly; any other write error (a full disk,
/// `> /dev/full`) lost the output, so it is reported and the process exits with 1.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            std::process::exit(1);
        }
    }
}

/// `bytes` in the largest binary unit that keeps the number at or above 1, e.g. `4.47 GiB`.
pub fn bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// Today's date and time in UTC, `YYYY-MM-DD HH:MM UTC`.
pub fn now_utc() -> String {
    utc(time::OffsetDateTime::now_utc())
}

/// `t` as `YYYY-MM-DD HH:MM UTC`.
fn utc(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!("{:04}-{:02}-{:02} {:02}:{:02} UTC", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes_pick_the_largest_unit() {
        assert_eq!(bytes(0), "0 bytes");
        assert_eq!(bytes(1023), "1023 bytes");
        assert_eq!(bytes(1024), "1 KiB");
        assert_eq!(bytes(4_802_110_464), "4.47 GiB");
        assert_eq!(bytes(2 << 30), "2 GiB");
    }

    #[test]
    fn dates_of_known_instants() {
        let at = |secs| utc(time::OffsetDateTime::from_unix_timestamp(secs).unwrap());
        assert_eq!(at(0), "1970-01-01 00:00 UTC");
        assert_eq!(at(11_016 * 86_400 + 3_661), "2000-02-29 01:01 UTC");
        assert_eq!(at(20_422 * 86_400 + 86_399), "2025-11-30 23:59 UTC");
        assert_eq!(at(-60), "1969-12-31 23:59 UTC");
    }
}
