//! Table tests of the cmd.exe reading (the Windows grammar chosen by argument).

use agent_path_rules::Os;

use super::super::{Analysis, CommandDenial, WriteTarget, analyse};

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn cmd(line: &str, allowed: Option<&[&str]>, blocked: Option<&[&str]>) -> Result<Analysis, CommandDenial> {
    let allowed = allowed.map(list);
    let blocked = blocked.map(list);
    analyse(line, allowed.as_deref(), blocked.as_deref(), Os::Windows)
}

#[test]
fn scratch() {
    for line in [
        "for /L %i in (1,1,3000) do @echo %i",
        "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo finished",
        "echo to-stdout& echo to-stderr>&2",
        "set A=sk-proj-& call echo key=%A%Zx9Qw8Er7Ty6Ui5Op4As& echo the-command-ran",
        "cd& set /p LINE=& call echo %LINE%",
        "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& set /a N=40+2 >nul& call echo finished-%N%",
        "c^md /c del x",
        "echo \"a\" \"&del x\"",
        "cmd /c \"echo\" \"&del x\"",
        "for /f %i in ('del x') do echo",
        "start \"\" del",
        "cmd/c del",
        "@del",
        ",;=del",
        "(\"del\") x",
        "if 1==1 del x",
        "echo x ^& del y | more",
    ] {
        eprintln!("{line}\n   -> {:?}\n   -> blocked del: {:?}", cmd(line, None, None), cmd(line, None, Some(&["del"])));
    }
    let _ = WriteTarget::Unknown(String::new());
}
