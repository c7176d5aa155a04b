//! The runtime's own credentials, out of reach of the commands it starts, sandbox on or off.
//!
//! A command's environment never carries them (`agent_tools::platform::child_env`), but a
//! process of the same user can read another's start-up environment
//! (`/proc/<pid>/environ`) and memory (`/proc/<pid>/mem`). So, once the configuration is
//! read:
//!
//! - the values of the credential variables are overwritten in the start-up environment
//!   block itself — what `/proc/<pid>/environ` shows — through `/proc/self/mem`, as
//!   `setproctitle` overwrites the same block (no `unsafe` needed: the standard library
//!   copies every value it hands out, and nothing reads these variables again);
//! - the process is marked not dumpable, so another process of the user may neither read
//!   its memory nor attach to it. Root keeps that power, and a kernel may be built without
//!   `/proc/self/mem` writes; what could not be done is logged.

#[cfg(target_os = "linux")]
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};

/// The variables whose values are credentials of the runtime itself.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) const CREDENTIALS: &[&str] = &[
    "LLM_GATEWAY_AUTH_TOKEN",
    "LLM_GATEWAY_HEADERS",
    "REGISTRATION_TOKEN",
    "AGENT_RUNTIME_HTTP_TOKEN",
];

/// Overwrites the credentials in the start-up environment and makes the process not
/// dumpable. Returns what could not be done, for the log.
#[cfg(target_os = "linux")]
pub(crate) fn protect() -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(error) = scrub_environment(CREDENTIALS) {
        problems.push(format!(
            "the start-up environment still holds the credentials: {error}"
        ));
    }
    if let Err(error) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        problems.push(format!(
            "other processes of the user may still read this one's memory: {error}"
        ));
    }
    problems
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn protect() -> Vec<String> {
    Vec::new()
}

/// The start-up environment block's bounds: fields 50 and 51 of `/proc/self/stat`
/// (counted after the parenthesised command name, which may hold spaces).
#[cfg(target_os = "linux")]
fn environment_bounds() -> std::io::Result<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let after_name = stat
        .rfind(')')
        .map(|end| &stat[end + 1..])
        .ok_or_else(|| std::io::Error::other("/proc/self/stat has no command name"))?;
    // Field 3 is the first after the name.
    let field = |number: usize| {
        after_name
            .split_whitespace()
            .nth(number - 3)
            .and_then(|text| text.parse::<u64>().ok())
            .ok_or_else(|| std::io::Error::other("/proc/self/stat lacks the environment bounds"))
    };
    Ok((field(50)?, field(51)?))
}

#[cfg(target_os = "linux")]
fn scrub_environment(names: &[&str]) -> std::io::Result<()> {
    let (start, end) = environment_bounds()?;
    let length = usize::try_from(end.saturating_sub(start))
        .map_err(|_| std::io::Error::other("the environment block is too large"))?;
    let mut memory = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")?;
    memory.seek(SeekFrom::Start(start))?;
    let mut block = vec![0u8; length];
    memory.read_exact(&mut block)?;
    let mut changed = false;
    for (offset, length) in credential_values(&block, names) {
        block[offset..offset + length].fill(0);
        changed = true;
    }
    if changed {
        memory.seek(SeekFrom::Start(start))?;
        memory.write_all(&block)?;
    }
    Ok(())
}

/// Where the values of `names` lie in an environment block (`NAME=value\0…`): offset and
/// length of each value.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn credential_values(block: &[u8], names: &[&str]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for entry in block.split(|byte| *byte == 0) {
        if let Some(equals) = entry.iter().position(|byte| *byte == b'=') {
            let name = &entry[..equals];
            if names.iter().any(|wanted| wanted.as_bytes() == name) {
                found.push((offset + equals + 1, entry.len() - equals - 1));
            }
        }
        offset += entry.len() + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_values_of_the_named_variables_are_found_and_no_others() {
        let block = b"PATH=/bin\0LLM_GATEWAY_AUTH_TOKEN=s3cr3t\0X=1\0REGISTRATION_TOKEN=\0";
        let found = credential_values(block, CREDENTIALS);
        assert_eq!(found.len(), 2);
        let (offset, length) = found[0];
        assert_eq!(&block[offset..offset + length], b"s3cr3t");
        assert_eq!(found[1].1, 0);
        assert!(credential_values(b"LLM_GATEWAY_AUTH_TOKENX=1\0", CREDENTIALS).is_empty());
    }

    /// The real thing, in a child: its `/proc/<pid>/environ` no longer shows the value.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_scrubbed_environment_no_longer_shows_the_value() {
        if std::env::var_os("SECRETS_TEST_CHILD").is_some() {
            scrub_environment(&["SECRETS_TEST_VALUE"]).unwrap();
            let environ = std::fs::read("/proc/self/environ").unwrap();
            let text = String::from_utf8_lossy(&environ);
            assert!(!text.contains("hunter2-value"), "{text}");
            assert!(text.contains("SECRETS_TEST_CHILD=1"), "{text}");
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let output = std::process::Command::new(exe)
            .args([
                "secrets::tests::a_scrubbed_environment_no_longer_shows_the_value",
                "--exact",
            ])
            .env("SECRETS_TEST_CHILD", "1")
            .env("SECRETS_TEST_VALUE", "hunter2-value")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
