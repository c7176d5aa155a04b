//! Sandbox mode (INTEROP.md §9): the runtime as the Sandbox Agent Host the Session Service
//! launches. Selected by `SESSION_ID` + `REGISTRATION_TOKEN` in the environment or by
//! `--sandbox-host`; listens on HTTP (`--port`, or `--listen http://IP:PORT`), registers
//! itself and serves the session of the registration's answer until Shutdown or SIGTERM.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_host::Host;
use agent_host::SandboxRegistration;
use agent_tools::LocalToolRouter;
use anyhow::{Context, bail};

/// Everything sandbox mode needs beyond the ordinary configuration.
#[derive(Debug, Clone)]
pub(crate) struct SandboxSettings {
    pub session_id: String,
    pub registration_token: String,
    pub bind: SocketAddr,
    pub endpoint: Option<String>,
    pub workspace_dir: PathBuf,
    pub task_arn: Option<String>,
    pub ecs_metadata_uri: Option<String>,
    pub deadline: Duration,
    pub retry_delay: Duration,
    pub limits: agent_host::transport::SandboxLimits,
}

/// Sandbox mode's durations: (variable, default in seconds). The service fails a sandbox
/// that has not registered within 180 s.
pub(crate) const REGISTRATION_TIMEOUT: (&str, f64) =
    ("AGENT_RUNTIME_REGISTRATION_TIMEOUT_SECONDS", 150.0);
pub(crate) const REGISTRATION_RETRY_DELAY: (&str, f64) =
    ("AGENT_RUNTIME_REGISTRATION_RETRY_DELAY_SECONDS", 1.0);

/// The HTTP surface's durations (README, sandbox mode): (variable, default in seconds).
const HEADER_TIMEOUT: (&str, f64) = ("AGENT_RUNTIME_SANDBOX_HEADER_TIMEOUT_SECONDS", 10.0);
const BODY_TIMEOUT: (&str, f64) = ("AGENT_RUNTIME_SANDBOX_BODY_TIMEOUT_SECONDS", 30.0);

/// A positive whole number read from `name` (`value`), or `default`.
fn count(name: &str, value: Option<String>, default: u64) -> anyhow::Result<u64> {
    match value {
        None => Ok(default),
        Some(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|value| *value > 0)
            .with_context(|| format!("{name} must be a positive whole number, not \"{text}\"")),
    }
}

fn limits(
    seconds: impl Fn((&str, f64)) -> anyhow::Result<Duration>,
) -> anyhow::Result<agent_host::transport::SandboxLimits> {
    let defaults = agent_host::transport::SandboxLimits::default();
    let size = |name: &str, value: Option<String>, default: usize| -> anyhow::Result<usize> {
        let value = count(name, value, u64::try_from(default).unwrap_or(u64::MAX))?;
        Ok(usize::try_from(value).unwrap_or(usize::MAX))
    };
    const CONNECTIONS: &str = "AGENT_RUNTIME_SANDBOX_MAX_CONNECTIONS";
    const RPC: &str = "AGENT_RUNTIME_SANDBOX_RPC_MAX_BYTES";
    const UPLOAD: &str = "AGENT_RUNTIME_SANDBOX_UPLOAD_MAX_BYTES";
    const LARGE: &str = "AGENT_RUNTIME_SANDBOX_LARGE_BODIES";
    const BACKLOG: &str = "AGENT_RUNTIME_SANDBOX_READER_BACKLOG";
    const SEND_BUFFER: &str = "AGENT_RUNTIME_SANDBOX_SEND_BUFFER_BYTES";
    Ok(agent_host::transport::SandboxLimits {
        header_timeout: seconds(HEADER_TIMEOUT)?,
        body_timeout: seconds(BODY_TIMEOUT)?,
        max_connections: size(
            CONNECTIONS,
            env("AGENT_RUNTIME_SANDBOX_MAX_CONNECTIONS"),
            defaults.max_connections,
        )?,
        rpc_max_bytes: size(
            RPC,
            env("AGENT_RUNTIME_SANDBOX_RPC_MAX_BYTES"),
            defaults.rpc_max_bytes,
        )?,
        upload_max_bytes: count(
            UPLOAD,
            env("AGENT_RUNTIME_SANDBOX_UPLOAD_MAX_BYTES"),
            defaults.upload_max_bytes,
        )?,
        large_bodies: size(
            LARGE,
            env("AGENT_RUNTIME_SANDBOX_LARGE_BODIES"),
            defaults.large_bodies,
        )?,
        reader_backlog: size(
            BACKLOG,
            env("AGENT_RUNTIME_SANDBOX_READER_BACKLOG"),
            defaults.reader_backlog,
        )?,
        drain_timeout: defaults.drain_timeout,
        send_buffer_bytes: env("AGENT_RUNTIME_SANDBOX_SEND_BUFFER_BYTES")
            .map(|value| size(SEND_BUFFER, Some(value), 0))
            .transpose()?,
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// Whether the environment or the flags ask for sandbox mode.
pub(crate) fn selected(flag: bool) -> bool {
    flag || (env("SESSION_ID").is_some() && env("REGISTRATION_TOKEN").is_some())
}

/// The settings from the environment and the launcher's flags. Locally
/// (`SANDBOX_LOCAL_MODE=true`) the sandbox binds loopback; in the cloud it must be reachable
/// from the service's network, so it binds 0.0.0.0.
pub(crate) fn settings(cli: &crate::config::Cli) -> anyhow::Result<SandboxSettings> {
    let Some(session_id) = env("SESSION_ID") else {
        bail!("sandbox mode needs SESSION_ID (the session the Session Service provisioned)");
    };
    let Some(registration_token) = env("REGISTRATION_TOKEN") else {
        bail!("sandbox mode needs REGISTRATION_TOKEN (given by the Session Service at launch)");
    };
    if let Some(transport) = cli.transport.as_deref()
        && transport != "http"
    {
        bail!("--transport {transport}: a sandbox serves HTTP only (--transport http)");
    }
    let local = env("SANDBOX_LOCAL_MODE").is_some_and(|value| value.eq_ignore_ascii_case("true"));
    let bind = bind_address(
        cli.listen.as_deref().map(std::path::Path::as_os_str),
        cli.port,
        local,
    )?;
    let workspace_dir = match cli
        .workspace_dir
        .clone()
        .or_else(|| env("WORKSPACE_DIR").map(PathBuf::from))
    {
        Some(dir) => dir,
        None => std::env::current_dir().context("the current directory cannot be read")?,
    };
    std::fs::create_dir_all(&workspace_dir).with_context(|| {
        format!(
            "cannot create the workspace folder {}",
            workspace_dir.display()
        )
    })?;
    let workspace_dir = workspace_dir.canonicalize().with_context(|| {
        format!(
            "cannot resolve the workspace folder {}",
            workspace_dir.display()
        )
    })?;
    let seconds = |(name, default): (&str, f64)| -> anyhow::Result<Duration> {
        match env(name) {
            None => Ok(Duration::from_secs_f64(default)),
            Some(text) => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|value| value.is_finite() && *value >= 0.0)
                .map(Duration::from_secs_f64)
                .with_context(|| format!("{name} must be a number of seconds, not \"{text}\"")),
        }
    };
    Ok(SandboxSettings {
        session_id,
        registration_token,
        bind,
        endpoint: env("SANDBOX_ENDPOINT"),
        workspace_dir,
        task_arn: env("SANDBOX_TASK_ARN").or_else(|| {
            // The local launcher names the process it spawned.
            local.then(|| format!("local:{}", std::process::id()))
        }),
        ecs_metadata_uri: env("ECS_CONTAINER_METADATA_URI_V4"),
        deadline: seconds(REGISTRATION_TIMEOUT)?,
        retry_delay: seconds(REGISTRATION_RETRY_DELAY)?,
        limits: limits(seconds)?,
    })
}

/// Where the sandbox listens: `--listen http://IP:PORT` as given; else `--port` (8080 by
/// default) on loopback locally and on every interface in the cloud, where the Session
/// Service's proxy reaches the container from its own network.
fn bind_address(
    listen: Option<&std::ffi::OsStr>,
    port: Option<u16>,
    local: bool,
) -> anyhow::Result<SocketAddr> {
    if let Some(listen) = listen {
        let text = listen.to_string_lossy();
        let Some(address) = text.strip_prefix("http://") else {
            bail!("--listen {text}: a sandbox listens on http://IP:PORT");
        };
        return address
            .trim_end_matches('/')
            .parse()
            .with_context(|| format!("--listen {text}: expected http://IP:PORT"));
    }
    let ip = if local {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    };
    Ok(SocketAddr::new(ip, port.unwrap_or(8080)))
}

/// The address the Session Service's proxy reaches: `SANDBOX_ENDPOINT`, else the bound
/// address, with the unspecified address replaced by the interface that routes to the
/// Session Service.
async fn endpoint(settings: &SandboxSettings, bound: SocketAddr, service_url: &str) -> String {
    if let Some(endpoint) = &settings.endpoint {
        return endpoint.trim_end_matches('/').to_owned();
    }
    let ip = if bound.ip().is_unspecified() {
        routed_ip(service_url).await.unwrap_or(bound.ip())
    } else {
        bound.ip()
    };
    format!("http://{}", SocketAddr::new(ip, bound.port()))
}

/// The local address of a (never used) UDP "connection" to the Session Service's host: the
/// interface the container is reached on.
async fn routed_ip(service_url: &str) -> Option<IpAddr> {
    let rest = service_url.split("://").nth(1)?;
    let authority = rest.split('/').next()?;
    let target = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let peer = tokio::net::lookup_host(target).await.ok()?.next()?;
    let socket = tokio::net::UdpSocket::bind(("0.0.0.0", 0)).await.ok()?;
    socket.connect(peer).await.ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_unspecified()).then_some(ip)
}

pub(crate) async fn serve(
    config: agent_host::HostConfig,
    tools: Arc<LocalToolRouter>,
    settings: SandboxSettings,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(settings.bind)
        .await
        .with_context(|| format!("cannot listen on http://{}", settings.bind))?;
    let bound = listener
        .local_addr()
        .context("the listener has no address")?;
    let endpoint = endpoint(&settings, bound, &config.services.session_url).await;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        address = %bound,
        %endpoint,
        session_id = %settings.session_id,
        "agent-runtime serving as a sandbox"
    );
    let registration = SandboxRegistration {
        session_id: settings.session_id.clone(),
        registration_token: settings.registration_token.clone(),
        endpoint,
        task_arn: settings.task_arn.clone(),
        ecs_metadata_uri: settings.ecs_metadata_uri.clone(),
        workspace_dir: settings.workspace_dir.clone(),
        deadline: settings.deadline,
        retry_delay: settings.retry_delay,
    };
    let failure: Arc<Mutex<Option<String>>> = Arc::default();
    let failed = Arc::clone(&failure);
    agent_host::transport::serve_sandbox(
        listener,
        settings.workspace_dir.clone(),
        settings.limits.clone(),
        |outbound| {
            let host = Host::new(config, tools, outbound);
            crate::spawn_signal_handler(Arc::clone(&host));
            host
        },
        move |host: Arc<Host>| {
            Box::pin(async move {
                if let Err(error) = host.register_sandbox(registration).await {
                    tracing::error!(%error, "sandbox registration failed; shutting down");
                    if let Ok(mut slot) = failed.lock() {
                        *slot = Some(error.to_string());
                    }
                    host.begin_shutdown("registration_failed");
                }
            })
        },
    )
    .await?;
    let failure = failure.lock().ok().and_then(|mut slot| slot.take());
    match failure {
        Some(message) => bail!("{message}"),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(endpoint: Option<&str>) -> SandboxSettings {
        SandboxSettings {
            session_id: "sess".to_owned(),
            registration_token: "token".to_owned(),
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 9123),
            endpoint: endpoint.map(str::to_owned),
            workspace_dir: PathBuf::from("/tmp"),
            task_arn: None,
            ecs_metadata_uri: None,
            deadline: Duration::from_secs(1),
            retry_delay: Duration::from_secs(1),
            limits: agent_host::transport::SandboxLimits::default(),
        }
    }

    #[test]
    fn the_cloud_binds_every_interface_and_the_local_launcher_loopback() {
        let cloud = bind_address(None, None, false).unwrap();
        assert_eq!(cloud, "0.0.0.0:8080".parse().unwrap());
        let local = bind_address(None, Some(9123), true).unwrap();
        assert_eq!(local, "127.0.0.1:9123".parse().unwrap());
        let listen = std::ffi::OsStr::new("http://10.0.1.42:7000/");
        assert_eq!(
            bind_address(Some(listen), Some(1), true).unwrap(),
            "10.0.1.42:7000".parse().unwrap()
        );
        let wrong = bind_address(Some(std::ffi::OsStr::new("/tmp/rt.sock")), None, false);
        assert!(wrong.unwrap_err().to_string().contains("http://IP:PORT"));
    }

    #[tokio::test]
    async fn an_unspecified_bind_registers_the_interface_that_reaches_the_service() {
        let bound = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 9123);
        // The route to a loopback Session Service leaves through loopback.
        let endpoint = endpoint(&settings(None), bound, "http://127.0.0.1:8000").await;
        assert_eq!(endpoint, "http://127.0.0.1:9123");
        // SANDBOX_ENDPOINT wins whatever the route.
        let given = endpoint_of(Some("http://sandbox.internal:9123/")).await;
        assert_eq!(given, "http://sandbox.internal:9123");
    }

    async fn endpoint_of(configured: Option<&str>) -> String {
        let bound = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 9123);
        endpoint(&settings(configured), bound, "http://127.0.0.1:8000").await
    }
}
