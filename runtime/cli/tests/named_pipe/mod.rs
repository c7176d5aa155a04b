//! The local socket transport on Windows: `--listen \\.\pipe\NAME` serves one client on a
//! named pipe, answers it, refuses a second one, and ends when the client goes.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

#[test]
fn a_named_pipe_client_is_answered_and_its_end_ends_the_runtime() {
    let home = tempfile::tempdir().unwrap();
    let name = format!(r"\\.\pipe\agent-runtime-test-{}", std::process::id());
    let mut child = super::runtime(home.path())
        .arg("--listen")
        .arg(&name)
        .env("LOG_LEVEL", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipe exists once the runtime says it listens.
    let mut log = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        match log.next() {
            Some(Ok(line)) if line.contains("listening") => break,
            Some(_) => {}
            None => panic!("the runtime ended before it listened"),
        }
    }
    std::thread::spawn(move || log.for_each(drop));

    let mut pipe = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&name)
        .unwrap();
    let second = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&name);
    assert!(second.is_err(), "a second client reached the runtime");
    pipe.write_all(super::REQUEST.as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(pipe.try_clone().unwrap())
        .read_line(&mut answer)
        .unwrap();
    super::assert_answered(&answer);
    drop(pipe);
    assert!(super::exits(child).success());
}
