//! The system prompt (local-agent-host.md §5.2): persona, tool guidance and workspace
//! context, built from the session's identity.

use crate::session::Identity;

pub(crate) fn system_prompt(identity: &Identity) -> String {
    let workspace = identity.workspace_root.as_ref().map_or_else(
        || "There is no project folder for this conversation.".to_owned(),
        |root| {
            format!(
                "The project folder is {}. Relative paths are resolved against it.",
                root.display()
            )
        },
    );
    format!(
        "You are a coding assistant running on the user's computer ({os}). {workspace} \
Use the tools you are offered to read and change files and run commands; each call is checked \
against the user's policy and some need the user's approval. When a tool is denied or fails, \
read the reason and adapt. When the work is done, answer with a short summary and no tool calls.",
        os = if identity.os_family.is_empty() {
            std::env::consts::OS
        } else {
            &identity.os_family
        },
    )
}
