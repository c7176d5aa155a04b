//! The system prompt's contents (local-agent-host.md §6.2: built once per session from the
//! agent persona, tool guidance, the workspace paths and the OS family). Its wording is the
//! runtime's; the kit checks the facts the model needs to act on the user's machine.

use cucumber::then;
use serde_json::Value;

use crate::steps::support::model::{model_requests, system_prompt};
use crate::steps::support::{StepResult, show};
use crate::world::ConformanceWorld;

#[then("every model request's system prompt names the project folder and the OS family")]
async fn system_prompt_facts(world: &mut ConformanceWorld) -> StepResult {
    let workspace = world.dirs()?.workspace.display().to_string();
    let os = world.runtime_os().family().to_lowercase();
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    let mut prompts = Vec::new();
    for request in &requests {
        let system = system_prompt(&request.body);
        check!(
            system.contains(&workspace) && system.to_lowercase().contains(&os),
            "the system prompt should name the project folder {workspace:?} (workspaceHint.localPaths[0]) and the OS family {os:?} (clientInfo.osFamily): {}",
            show(&Value::String(system))
        );
        prompts.push(system);
    }
    prompts.dedup();
    check!(
        prompts.len() == 1,
        "the system prompt is built once per session, but the requests carry {} different ones",
        prompts.len()
    );
    Ok(())
}

#[then(expr = "every model request carries the same system prompt, naming {string}")]
async fn same_system_prompt(world: &mut ConformanceWorld, os_family: String) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    let mut prompts: Vec<String> = Vec::new();
    for request in &requests {
        let system = system_prompt(&request.body);
        check!(
            system.to_lowercase().contains(&os_family.to_lowercase()),
            "the system prompt should name the OS family the desktop app reported ({os_family:?}): {}",
            show(&Value::String(system))
        );
        if !prompts.contains(&system) {
            prompts.push(system);
        }
    }
    check!(
        prompts.len() == 1,
        "a session keeps one system prompt, also across a crash and ResumeSession; the requests carry {}: {}",
        prompts.len(),
        prompts
            .iter()
            .map(|p| show(&Value::String(p.clone())))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    Ok(())
}
