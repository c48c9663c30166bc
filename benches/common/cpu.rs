//! The CPU time of a bench's measured part (frontend and check; `speed` times stages by
//! difference instead).

/// CPU seconds the process has used so far (user and system, all threads), from
/// /proc/self/stat: on a shared machine a steadier figure than the wall clock.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // Linux reports them in USER_HZ, 100 per second on every architecture it runs on.
    Some(ticks / 100.0)
}

/// `cpu 2.61 s = 7.7 MB/s on 2 free cores`: the rate the CPU time gives with both cores free.
pub fn cpu_line(mb: f64, cpu_before: Option<f64>) -> Option<String> {
    let used = cpu_seconds()? - cpu_before?;
    Some(format!(
        "cpu {used:.2} s = {:.1} MB/s on 2 free cores",
        mb / (used / 2.0)
    ))
}
