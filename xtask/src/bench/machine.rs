//! The machine a report was taken on: CPU model, cores, OS, kernel, load.

use std::process::Command;

pub(super) fn describe() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!(
        "| | |\n|---|---|\n| CPU | {} |\n| cores | {cores} |\n| OS | {} ({} {}) |\n| kernel | {} |\n| load average at start | {} |\n",
        cpu_model(),
        os_name(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        kernel(),
        load_average(),
    )
}

fn cpu_model() -> String {
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo")
        && let Some(model) = info
            .lines()
            .find(|line| line.starts_with("model name"))
            .and_then(|line| line.split_once(':'))
    {
        return model.1.trim().to_owned();
    }
    command_line("sysctl", &["-n", "machdep.cpu.brand_string"]).unwrap_or_else(|| "unknown".into())
}

fn os_name() -> String {
    if let Ok(release) = std::fs::read_to_string("/etc/os-release")
        && let Some(name) = release
            .lines()
            .find_map(|line| line.strip_prefix("PRETTY_NAME="))
    {
        return name.trim_matches('"').to_owned();
    }
    command_line("sw_vers", &["-productVersion"])
        .map(|v| format!("macOS {v}"))
        .unwrap_or_else(|| std::env::consts::OS.to_owned())
}

fn kernel() -> String {
    command_line("uname", &["-sr"]).unwrap_or_else(|| "unknown".into())
}

/// The 1/5/15-minute load averages: other work on the machine skews every figure.
pub(super) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .or_else(|| command_line("sysctl", &["-n", "vm.loadavg"]))
        .unwrap_or_else(|| "unknown".into())
}

fn command_line(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}
