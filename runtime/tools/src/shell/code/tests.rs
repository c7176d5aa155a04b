//! ExecuteCode with the machine's interpreters (unconfined: the unit tests install no
//! sandbox; the kit runs it confined through the runtime binary). A test that runs code
//! needs its interpreter: where the machine has none (Wine has no Python) it says so on
//! stderr and checks nothing, since the tool's answer there is the missing-interpreter
//! failure, tested on its own below. The tests that spell POSIX paths or shell code are
//! Unix-only.

use std::path::Path;

use agent_protocol::ToolStatus;
use base64::Engine as _;
use serde_json::{Value, json};

use super::*;
use crate::testing::assert_failed;

fn tool() -> ExecuteCode {
    ExecuteCode::new(crate::shell::RunCommand::new().settings())
}

fn request(dir: &Path, args: Value) -> ToolRequest {
    let mut request = crate::testing::request("ExecuteCode", dir, args);
    request.limits.timeout_ms = Some(30_000);
    request
}

async fn run(tool: &ExecuteCode, request: ToolRequest) -> ToolResult {
    tokio::time::timeout(Duration::from_secs(40), tool.run(&request))
        .await
        .expect("the call hung")
}

/// Whether the machine has an interpreter for `language`; if not, why the test checks
/// nothing is printed.
fn has_interpreter(language: &str) -> bool {
    let interpreters = super::language(language).map_or(&[][..], |l| l.interpreters);
    let found = find_interpreter(interpreters, std::env::var_os("PATH").as_deref()).is_some();
    if !found {
        eprintln!(
            "not applicable here: no {language} interpreter ({}) on the PATH",
            interpreters.join(", ")
        );
    }
    found
}

fn text(result: &ToolResult) -> &str {
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    result.output_text.as_deref().unwrap_or_default()
}

#[cfg(unix)]
#[tokio::test]
async fn python_runs_in_the_project_folder_and_its_output_has_run_commands_layout() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let code =
        "import os, sys\nprint('cwd', os.getcwd())\nprint('oops', file=sys.stderr)\nsys.exit(3)\n";
    let result = run(
        &tool(),
        request(dir.path(), json!({"code": code, "description": "check"})),
    )
    .await;
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(
        text(&result),
        format!(
            "Exit code: 3\n--- stdout ---\ncwd {}\n--- stderr ---\noops\n",
            cwd.display()
        )
    );
}

#[tokio::test]
async fn code_longer_than_any_argument_reaches_the_interpreter_whole() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Past Linux's 128 KiB limit of one argument: the code goes through stdin.
    let code = format!("x = '{}'\nprint(len(x))\n", "a".repeat(200_000));
    let result = run(&tool(), request(dir.path(), json!({ "code": code }))).await;
    assert!(
        text(&result).contains("--- stdout ---\n200000\n"),
        "{result:?}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn other_languages_run_by_their_interpreter() {
    if !has_interpreter("sh") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let result = run(
        &tool(),
        request(
            dir.path(),
            json!({"code": "echo from $0 \"$((6*7))\"", "language": "sh"}),
        ),
    )
    .await;
    assert!(text(&result).contains("42"), "{result:?}");
}

#[tokio::test]
async fn output_is_bounded_by_max_output_bytes_and_kept_whole_as_an_artifact() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut request = request(
        dir.path(),
        json!({"code": "for i in range(5000): print('line', i)"}),
    );
    request.limits.max_output_bytes = Some(500);
    let result = run(&tool(), request).await;
    let shown = text(&result);
    assert!(shown.contains("[... truncated"), "{shown}");
    assert!(shown.len() < 700, "{}", shown.len());
    assert!(shown.contains("line 4999"), "the tail is kept: {shown}");
    assert_eq!(result.artifacts.len(), 1, "{:?}", result.artifacts);
}

#[tokio::test]
async fn a_run_past_its_timeout_is_ended_with_tool_execution_timeout() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let result = run(
        &tool(),
        request(
            dir.path(),
            json!({"code": "import time\nprint('started', flush=True)\ntime.sleep(60)", "timeout_seconds": 1}),
        ),
    )
    .await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionTimeout,
        "timed out after 1 seconds",
    );
    assert!(
        result
            .output_text
            .as_deref()
            .unwrap_or_default()
            .contains("started")
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // The host's limit (maxExecutionTimeSeconds) lowers the asked timeout.
    let mut limited = request(dir.path(), json!({"code": "import time\ntime.sleep(60)"}));
    limited.limits.timeout_ms = Some(500);
    let result = run(&tool(), limited).await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionTimeout,
        "timed out after 0.5 seconds",
    );
}

#[tokio::test]
async fn a_missing_interpreter_and_bad_arguments_are_readable_failures() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let nowhere = tool().with_search_path(empty.path());
    let result = run(&nowhere, request(dir.path(), json!({"code": "print(1)"}))).await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionFailed,
        "no python interpreter was found on this machine (looked for python3, python on the PATH)",
    );
    for (args, says) in [
        (json!({}), "code"),
        (json!({"code": "  "}), "the code is empty"),
        (
            json!({"code": "x", "timeout_seconds": 601}),
            "timeout_seconds",
        ),
        (
            json!({"code": "x", "timeout_seconds": 0}),
            "timeout_seconds",
        ),
        (
            json!({"code": "x", "language": "cobol"}),
            "unsupported language \"cobol\"",
        ),
        (json!({"code": "x", "cwd": "/"}), "cwd"),
    ] {
        assert_failed(
            &run(&tool(), request(dir.path(), args)).await,
            ErrorCode::InvalidRequest,
            says,
        );
    }
}

#[test]
fn interpreters_are_found_in_path_order_and_languages_by_any_of_their_names() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    for (dir, name) in [(&first, "python"), (&second, "python3")] {
        let file = dir.path().join(name);
        std::fs::write(&file, "").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let path = std::env::join_paths([first.path(), second.path()]).unwrap();
    // python3 is preferred over python, wherever it sits on the PATH.
    assert_eq!(
        find_interpreter(&["python3", "python"], Some(&path)),
        Some(second.path().join("python3"))
    );
    assert_eq!(find_interpreter(&["ruby"], Some(&path)), None);
    assert_eq!(find_interpreter(&["python3"], None), None);
    assert_eq!(
        language("Python").map(|l| l.interpreters[0]),
        Some("python3")
    );
    assert_eq!(language(" js ").map(|l| l.interpreters[0]), Some("node"));
    assert!(language("cobol").is_none());
}

/// The smallest valid PNG: a 1×1 transparent pixel.
const PIXEL: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82";

/// Python that writes `files` (name, bytes) to the output folder, then prints where it is.
fn writing(files: &[(&str, &[u8])]) -> String {
    let mut code = String::from("import os\nfolder = os.environ['COWORK_OUTPUT_DIR']\n");
    for (name, bytes) in files {
        let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        code.push_str(&format!(
            "open(os.path.join(folder, '{name}'), 'wb').write(bytes.fromhex('{hex}'))\n"
        ));
    }
    code.push_str("print('folder', folder)\n");
    code
}

/// The folder the code printed as its output folder.
fn printed_folder(text: &str) -> std::path::PathBuf {
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("folder "))
        .unwrap_or_else(|| panic!("no folder printed: {text}"));
    std::path::PathBuf::from(line)
}

fn with_images() -> ExecuteCode {
    tool().with_image_parts(true)
}

#[tokio::test]
async fn an_image_the_code_writes_to_its_output_folder_goes_to_the_model_and_the_folder_goes() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let code = writing(&[("chart.png", PIXEL)]);
    let result = run(&with_images(), request(dir.path(), json!({ "code": code }))).await;
    let shown = text(&result);
    assert!(
        shown.contains(
            "--- images ---\nWritten to COWORK_OUTPUT_DIR, shown to you with this result: chart.png (67 B)\n"
        ),
        "{shown}"
    );
    assert_eq!(result.images.len(), 1, "{result:?}");
    assert_eq!(result.images[0].media_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&result.images[0].data_base64)
        .unwrap();
    assert_eq!(bytes, PIXEL);
    let folder = printed_folder(shown);
    assert!(folder.is_absolute(), "{}", folder.display());
    assert!(!folder.exists(), "{} is left", folder.display());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "the project folder got a file"
    );
    // Each call has a folder of its own.
    let again = run(&with_images(), request(dir.path(), json!({ "code": code }))).await;
    assert_ne!(printed_folder(text(&again)), folder);
}

#[tokio::test]
async fn without_image_parts_the_images_are_named_but_not_sent() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let code = writing(&[("chart.png", PIXEL)]);
    let result = run(&tool(), request(dir.path(), json!({ "code": code }))).await;
    let shown = text(&result);
    assert!(result.images.is_empty(), "{result:?}");
    assert!(
        shown.contains("Written to COWORK_OUTPUT_DIR, not shown to you: this runtime's model gateway takes no images: chart.png (67 B)"),
        "{shown}"
    );
    assert!(
        !tool()
            .definition()
            .description
            .contains("COWORK_OUTPUT_DIR")
    );
    assert!(
        with_images()
            .definition()
            .description
            .contains("COWORK_OUTPUT_DIR")
    );
}

#[tokio::test]
async fn oversize_impostor_and_surplus_files_are_left_out_and_named() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u8> = PIXEL.iter().copied().chain([0u8; 100]).collect();
    let code = writing(&[
        ("a.png", PIXEL),
        ("b.png", &big),
        ("c.png", b"not a png"),
        ("d.csv", b"x,y\n"),
        ("e.gif", b"GIF89a"),
        ("f.jpg", b"\xff\xd8\xff\xe0"),
        ("g.webp", b"RIFF\0\0\0\0WEBPVP8 "),
        ("h.png", PIXEL),
    ]);
    let mut call = request(dir.path(), json!({ "code": code }));
    // The size limit of the entry lowers ViewImage's bound.
    call.limits.max_file_size_bytes = Some(100);
    let result = run(&with_images(), call).await;
    let shown = text(&result);
    let kinds: Vec<&str> = result
        .images
        .iter()
        .map(|image| image.media_type.as_str())
        .collect();
    assert_eq!(
        kinds,
        ["image/png", "image/gif", "image/jpeg", "image/webp"],
        "{shown}"
    );
    for left in [
        "b.png (167 B, more than the 100 B an image may have)",
        "c.png (named as image/png but its content is not one)",
        "d.csv (not a PNG, JPEG, GIF or WebP image)",
        "h.png (more than 4 images)",
    ] {
        assert!(shown.contains(left), "{left} not in {shown}");
    }
    assert!(!printed_folder(shown).exists());
}

#[cfg(unix)]
#[tokio::test]
async fn a_link_to_an_image_elsewhere_is_not_sent() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.png");
    std::fs::write(&secret, PIXEL).unwrap();
    let code = format!(
        "import os\nfolder = os.environ['COWORK_OUTPUT_DIR']\n\
         os.symlink({secret:?}, os.path.join(folder, 'soft.png'))\n\
         os.link({secret:?}, os.path.join(folder, 'hard.png'))\n"
    );
    let result = run(&with_images(), request(dir.path(), json!({ "code": code }))).await;
    let shown = text(&result);
    assert!(result.images.is_empty(), "{shown}");
    assert!(
        shown.contains("hard.png (a link to another file)"),
        "{shown}"
    );
    assert!(shown.contains("soft.png (not a regular file)"), "{shown}");
    assert!(secret.exists());
}

/// The bootstrap hooks pyplot's `show` once the code imports it, and the code's line
/// numbers and `from __future__` imports are as with `python3 -`. A stand-in matplotlib in
/// the project folder (first on the code's import path) plays the real one, whose `show`
/// would print.
#[tokio::test]
async fn pyplot_show_saves_the_figures_and_tracebacks_keep_the_code_s_line_numbers() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("matplotlib");
    std::fs::create_dir(&package).unwrap();
    std::fs::write(package.join("__init__.py"), "").unwrap();
    let hex: String = PIXEL.iter().map(|byte| format!("{byte:02x}")).collect();
    std::fs::write(
        package.join("pyplot.py"),
        format!(
            "_figures = {{}}\n\
             class _Figure(object):\n    def savefig(self, path, **kwargs):\n        open(path, 'wb').write(bytes.fromhex('{hex}'))\n\
             def plot(*args):\n    _figures[len(_figures) + 1] = _Figure()\n\
             def figure(number=None):\n    return _figures[number]\n\
             def get_fignums():\n    return sorted(_figures)\n\
             def close(which=None):\n    _figures.clear()\n\
             def show(*args, **kwargs):\n    print('a window opened')\n"
        ),
    )
    .unwrap();
    let code = "from __future__ import annotations\nimport os\nimport matplotlib.pyplot as plt\n\
                plt.plot(1)\nplt.plot(2)\nplt.show()\nplt.plot(3)\nplt.show()\n\
                print('backend', os.environ.get('MPLBACKEND'))\n\nraise ValueError('boom')\n";
    let result = run(&with_images(), request(dir.path(), json!({ "code": code }))).await;
    let shown = text(&result);
    assert!(!shown.contains("a window opened"), "{shown}");
    assert!(shown.contains("backend Agg"), "{shown}");
    assert!(
        shown.contains("shown to you with this result: figure_000.png (67 B), figure_001.png (67 B), figure_002.png (67 B)"),
        "{shown}"
    );
    assert_eq!(result.images.len(), 3);
    assert!(
        shown.contains(
            "Exit code: 1\n--- stdout ---\nbackend Agg\n--- stderr ---\nTraceback (most recent call last):\n  File \"<stdin>\", line 11, in <module>\nValueError: boom\n"
        ),
        "{shown}"
    );
    // Nothing of the bootstrap is left in the code's namespace; stdin was the code.
    let clean = "print(sorted(name for name in globals() if not name.startswith('__')))\n\
                 import sys\nprint(sys.argv, repr(sys.stdin.read()))\nx = = 1\n";
    let result = run(&tool(), request(dir.path(), json!({ "code": clean }))).await;
    let shown = text(&result);
    assert!(
        shown.starts_with(
            "Exit code: 1\n--- stdout ---\n--- stderr ---\n  File \"<stdin>\", line 4\n"
        ),
        "{shown}"
    );
    let fine = "print(sorted(name for name in globals() if not name.startswith('__')))\n\
                import sys\nprint(sys.argv, repr(sys.stdin.read()))\n";
    let result = run(&tool(), request(dir.path(), json!({ "code": fine }))).await;
    assert!(
        text(&result).contains("--- stdout ---\n[]\n['-'] ''\n"),
        "{result:?}"
    );
}
