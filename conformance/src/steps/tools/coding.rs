//! Steps of the coding file tools (INTEROP.md §11) that the file tools' steps do not already
//! give: what a tool made in the workspace besides files.

use cucumber::then;

use crate::steps::support::StepResult;
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

#[then(expr = "the workspace folder {string} now exists")]
async fn folder_now_exists(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    check!(
        path.is_dir(),
        "the workspace folder {name} should have been created: {} is not a folder",
        path.display()
    );
    Ok(())
}
