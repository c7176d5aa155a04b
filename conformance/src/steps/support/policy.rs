//! Shaping the policy bundle the Session Service fake issues: only before the session exists,
//! since CreateSession fetches the bundle.

use agent_mocks::policy::{capability_entry, set_capability};
use serde_json::Value;

use crate::world::ConformanceWorld;

/// The absolute path of a workspace file, as a model would name it (ReadFile takes absolute
/// paths, local-tool-runtime.md §4.1).
pub(crate) fn workspace_path(world: &mut ConformanceWorld, name: &str) -> anyhow::Result<String> {
    Ok(world.dirs()?.workspace.join(name).display().to_string())
}

/// Edits the Session Service fake's bundle template: only before the session exists, since
/// CreateSession fetches the bundle.
pub(crate) async fn edit_policy(
    world: &mut ConformanceWorld,
    edit: impl FnOnce(&mut Value),
) -> anyhow::Result<()> {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    world.fakes().await?.session.update_policy(edit);
    Ok(())
}

/// Sets the bundle's entry for `capability` to `scope` (replacing any entry it had); like
/// [`edit_policy`], only before the session exists.
pub(crate) async fn grant(
    world: &mut ConformanceWorld,
    capability: &str,
    scope: Value,
) -> anyhow::Result<()> {
    edit_policy(world, |bundle| {
        set_capability(bundle, capability_entry(capability, scope));
    })
    .await
}
