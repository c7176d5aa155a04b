//! Steps for the ways out of the OS sandbox a hostile model knows (area HARD): local
//! sockets (an agent socket, an abstract one), signals to other processes of the user, a
//! daemon that would outlive its command, metadata changes outside the grants, and the
//! runtime's own start-up environment. Each is judged from outside: a listener that must
//! not be connected to, a process that must still run (or must be gone), a file whose mode,
//! times and content must be unchanged, bytes that must not appear.
//!
//! The commands name what they aim at through `${UNIX_SOCKET}`, `${ABSTRACT_SOCKET}`,
//! `${VICTIM_PID}` and `${DAEMON_SECONDS}` (a number no other process sleeps for), expanded
//! by [`expand`].

use std::os::unix::fs::MetadataExt as _;
use std::os::unix::net::UnixListener;
use std::sync::Mutex;

use anyhow::Context as _;
use cucumber::{given, then};

use crate::steps::support::StepResult;
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// Open listeners and processes of running scenarios, by the `marks` key's index (plus
/// one); taken out by the step that judges them.
static LISTENERS: Mutex<Vec<Option<UnixListener>>> = Mutex::new(Vec::new());
static VICTIMS: Mutex<Vec<Option<std::process::Child>>> = Mutex::new(Vec::new());

const UNIX_LISTENER: &str = "escapes.unix";
const ABSTRACT_LISTENER: &str = "escapes.abstract";
const VICTIM: &str = "escapes.victim";

fn lock<T>(registry: &Mutex<T>) -> anyhow::Result<std::sync::MutexGuard<'_, T>> {
    registry
        .lock()
        .map_err(|_| anyhow::anyhow!("a registry of the kit is poisoned"))
}

fn keep_listener(
    world: &mut ConformanceWorld,
    key: &'static str,
    listener: UnixListener,
) -> StepResult {
    listener.set_nonblocking(true)?;
    let mut listeners = lock(&LISTENERS)?;
    listeners.push(Some(listener));
    world.marks.insert(key, listeners.len());
    Ok(())
}

/// A number derived from this scenario's workspace path: unique among running scenarios.
fn scenario_number(world: &mut ConformanceWorld) -> u64 {
    let dirs = world
        .dirs()
        .map(|dirs| dirs.workspace.display().to_string());
    dirs.unwrap_or_default().bytes().fold(17u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(u64::from(byte))
    })
}

/// The abstract socket name of this scenario (no leading NUL).
fn abstract_name(world: &mut ConformanceWorld) -> String {
    format!("conformance-{}", scenario_number(world))
}

/// A number of seconds no other process on the machine sleeps for: the scenario's daemon
/// is found by it.
fn daemon_seconds(world: &mut ConformanceWorld) -> String {
    format!("{}", 700_000 + scenario_number(world) % 200_000)
}

/// Expands this module's placeholders in a command.
pub(crate) fn expand(world: &mut ConformanceWorld, command: &str) -> anyhow::Result<String> {
    let mut command = command.to_owned();
    if command.contains("${UNIX_SOCKET}") {
        let path = socket_path(world)?;
        command = command.replace("${UNIX_SOCKET}", &path.display().to_string());
    }
    if command.contains("${ABSTRACT_SOCKET}") {
        command = command.replace("${ABSTRACT_SOCKET}", &abstract_name(world));
    }
    if command.contains("${VICTIM_PID}") {
        let index = world
            .marks
            .get(VICTIM)
            .context("no victim process (\"a process of the user outside the runtime\")")?;
        let victims = lock(&VICTIMS)?;
        let pid = victims
            .get(index - 1)
            .and_then(Option::as_ref)
            .map(std::process::Child::id)
            .context("the victim process was already judged")?;
        command = command.replace("${VICTIM_PID}", &pid.to_string());
    }
    Ok(command.replace("${DAEMON_SECONDS}", &daemon_seconds(world)))
}

fn socket_path(world: &mut ConformanceWorld) -> anyhow::Result<std::path::PathBuf> {
    let root = world
        .dirs()?
        .workspace
        .parent()
        .context("the workspace has no parent folder")?
        .to_path_buf();
    Ok(root.join("agent.sock"))
}

#[given("a Unix socket listener beside the workspace, like an ssh agent's")]
async fn unix_listener(world: &mut ConformanceWorld) -> StepResult {
    let listener = UnixListener::bind(socket_path(world)?).context("cannot bind the socket")?;
    keep_listener(world, UNIX_LISTENER, listener)
}

#[given("an abstract Unix socket listener, like a desktop bus")]
async fn abstract_listener(world: &mut ConformanceWorld) -> StepResult {
    use std::os::linux::net::SocketAddrExt as _;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name(world))?;
    let listener = UnixListener::bind_addr(&address).context("cannot bind the abstract socket")?;
    keep_listener(world, ABSTRACT_LISTENER, listener)
}

fn never_connected(index: Option<usize>, what: &str) -> StepResult {
    let index = index.with_context(|| format!("no {what} in this scenario"))?;
    let listener = lock(&LISTENERS)?
        .get_mut(index - 1)
        .and_then(Option::take)
        .with_context(|| format!("the {what} was already judged"))?;
    match listener.accept() {
        Ok(_) => fail!("a command connected to the {what}"),
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
        Err(error) => Err(anyhow::anyhow!("the {what} failed: {error}").into()),
    }
}

#[then("the Unix socket listener was never connected to")]
async fn unix_never(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    never_connected(
        world.marks.get(UNIX_LISTENER).copied(),
        "Unix socket listener",
    )
}

#[then("the abstract socket listener was never connected to")]
async fn abstract_never(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    never_connected(
        world.marks.get(ABSTRACT_LISTENER).copied(),
        "abstract socket listener",
    )
}

#[given("a process of the user outside the runtime")]
async fn victim(world: &mut ConformanceWorld) -> StepResult {
    let child = std::process::Command::new("sleep")
        .arg("600")
        .stdin(std::process::Stdio::null())
        .spawn()
        .context("cannot start sleep")?;
    let mut victims = lock(&VICTIMS)?;
    victims.push(Some(child));
    world.marks.insert(VICTIM, victims.len());
    Ok(())
}

#[then("the process outside the runtime is still running")]
async fn victim_alive(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let index = *world.marks.get(VICTIM).context("no victim process")?;
    let mut child = lock(&VICTIMS)?
        .get_mut(index - 1)
        .and_then(Option::take)
        .context("the victim process was already judged")?;
    let state = child.try_wait()?;
    let _ = child.kill();
    let _ = child.wait();
    check!(
        state.is_none(),
        "a command ended a process outside the runtime ({state:?})"
    );
    Ok(())
}

/// Processes on this machine running `sleep <seconds>`.
fn sleepers(seconds: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| {
                let args: Vec<&[u8]> = line.split(|byte| *byte == 0).collect();
                args.iter().any(|arg| arg.ends_with(b"sleep")) && args.contains(&seconds.as_bytes())
            })
        })
        .collect()
}

#[then("no process the command started is left running")]
async fn no_daemon(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let seconds = daemon_seconds(world);
    let left = sleepers(&seconds);
    for pid in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(*pid).unwrap_or(0)),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    check!(
        left.is_empty(),
        "a process the command started (sleep {seconds}) outlived it: pids {left:?}"
    );
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    mode: u32,
    modified: i64,
    content: Vec<u8>,
    attributes: Vec<String>,
}

fn snapshot(path: &std::path::Path) -> anyhow::Result<Snapshot> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Snapshot {
        mode: meta.mode() & 0o7777,
        modified: meta.mtime(),
        content: std::fs::read(path)?,
        attributes: xattr_names(path),
    })
}

/// The extended attributes' names, as `getfattr` would list them (none when it is absent).
fn xattr_names(path: &std::path::Path) -> Vec<String> {
    std::process::Command::new("getfattr")
        .arg("--absolute-names")
        .arg("-d")
        .arg(path)
        .output()
        .map(|output| {
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter(|line| line.contains('='))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[given(expr = "the file {string} outside the workspace, last changed a year ago")]
async fn outside_file(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.home.join(&name);
    std::fs::write(&path, "untouched\n")?;
    let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(365 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&path)?
        .set_modified(year_ago)?;
    Ok(())
}

#[then(
    expr = "the file {string} outside the workspace keeps its mode, times, content and attributes"
)]
async fn outside_unchanged(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.home.join(&name);
    let now = snapshot(&path)?;
    check!(
        now.mode == 0o644 || now.mode == 0o600 || now.mode == 0o664,
        "a command changed the mode of {} to {:o}",
        path.display(),
        now.mode
    );
    let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(364 * 86_400);
    let limit = year_ago
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| i64::try_from(since.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or_default();
    check!(
        now.modified < limit,
        "a command changed the modification time of {}",
        path.display()
    );
    check!(
        now.content == b"untouched\n",
        "a command changed {}",
        path.display()
    );
    check!(
        now.attributes.is_empty(),
        "a command set extended attributes on {}: {:?}",
        path.display(),
        now.attributes
    );
    Ok(())
}

#[then(expr = "the workspace file {string} does not hold the runtime's gateway token")]
async fn no_gateway_token(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    let bytes = std::fs::read(&path).unwrap_or_default();
    let token = crate::env::GATEWAY_TOKEN.as_bytes();
    check!(
        !bytes.windows(token.len()).any(|window| window == token),
        "a command read the runtime's gateway token into {}",
        path.display()
    );
    Ok(())
}

/// The `.git` folder a command made in the workspace; `None` when the runtime removed it
/// (a repository reverted whole runs nothing later either).
fn workspace_repository(
    world: &mut ConformanceWorld,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let git = world.dirs()?.workspace.join(".git");
    Ok(git.is_dir().then_some(git))
}

#[then("the repository in the workspace has no hook but git's samples")]
async fn no_hooks(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let Some(git) = workspace_repository(world)? else {
        return Ok(());
    };
    let hooks = git.join("hooks");
    let planted: Vec<String> = std::fs::read_dir(&hooks)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| !name.ends_with(".sample"))
                .collect()
        })
        .unwrap_or_default();
    check!(
        planted.is_empty(),
        "hooks the command planted are still in {}: {planted:?} (git runs them later, outside the sandbox)",
        hooks.display()
    );
    Ok(())
}

#[then(expr = "git reads neither {string} nor {string} from the repository in the workspace")]
async fn no_settings(world: &mut ConformanceWorld, first: String, second: String) -> StepResult {
    wait_task_end(world).await?;
    let Some(git) = workspace_repository(world)? else {
        return Ok(());
    };
    let config = git.join("config");
    for key in [first, second] {
        // git's own reading of the file: what a later `git status` outside the sandbox sees.
        let output = tokio::process::Command::new("git")
            .args(["config", "--file"])
            .arg(&config)
            .args(["--get", &key])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .await
            .map_err(|error| anyhow::anyhow!("cannot run git: {error}"))?;
        check!(
            !output.status.success(),
            "{} still sets {key} = {:?}: git runs it later, outside the sandbox",
            config.display(),
            String::from_utf8_lossy(&output.stdout).trim()
        );
    }
    Ok(())
}
