//! `mock-services` started by a launcher that reads only the lines it needs and closes the
//! pipe (as `cargo xtask demo` did) keeps serving: a failed write to stdout must not take
//! the fakes down while a person is still answering an approval.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_does_not_take_the_fakes_down() {
    // A pipe nobody reads: every write to it fails at once, deterministically.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-services"))
        .arg("--quiet")
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = Vec::new();
    for line in stderr.lines().map_while(Result::ok) {
        let ready = line.contains("Ctrl-C to stop");
        said.push(line);
        if ready {
            break;
        }
    }
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        running
            && said
                .last()
                .is_some_and(|line| line.contains("Ctrl-C to stop")),
        "mock-services must come up and keep running with a closed stdout; it said: {said:?}"
    );
}
