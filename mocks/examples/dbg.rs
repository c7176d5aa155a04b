use agent_mocks::{StreamStep, StreamingGateway};
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let g = StreamingGateway::start().await?;
    g.push_stream(vec![
        StreamStep::Chunk("partial".into()),
        StreamStep::Disconnect,
        StreamStep::done(),
    ]);
    println!("{}", g.url());
    let out = tokio::process::Command::new("curl")
        .args([
            "-sv",
            "-N",
            "-X",
            "POST",
            "--max-time",
            "5",
            &format!("{}/chat/completions", g.url()),
        ])
        .output()
        .await?;
    println!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
