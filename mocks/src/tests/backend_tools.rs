//! The Backend Tool Service fake over HTTP.

use serde_json::{Value, json};

use super::support::client;
use crate::{BackendToolReply, BackendToolServiceFake};

async fn invoke(fake: &BackendToolServiceFake, tool: &str) -> (u16, Value) {
    let response = client()
        .post(format!("{}/tools/{tool}/invoke", fake.url()))
        .json(
            &json!({"toolName": tool, "sessionId": "s1", "taskId": "t1", "stepId": "step_001",
                      "toolCallId": "c1", "arguments": {"text": "hi"}}),
        )
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn scripted_tools_answer_tool_results_and_invocations_are_recorded() {
    let fake = BackendToolServiceFake::start().await.unwrap();
    fake.script("Translate", BackendToolReply::Succeeded("bonjour".into()));
    fake.script(
        "Broken",
        BackendToolReply::Failed {
            code: "TOOL_EXECUTION_FAILED".into(),
            message: "down".into(),
        },
    );
    let (status, body) = invoke(&fake, "Translate").await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "succeeded");
    assert_eq!(body["outputText"], "bonjour");
    assert_eq!(body["sessionId"], "s1");
    assert_eq!(body["toolCallId"], "c1");
    let (_, failed) = invoke(&fake, "Broken").await;
    assert_eq!(failed["error"]["code"], "TOOL_EXECUTION_FAILED");
    let (status, _) = invoke(&fake, "Unknown").await;
    assert_eq!(status, 404);
    let seen = fake.invocations().await;
    let tools: Vec<&str> = seen.iter().map(|(tool, _)| tool.as_str()).collect();
    assert_eq!(tools, ["Translate", "Broken", "Unknown"]);
    assert_eq!(seen[0].1["arguments"]["text"], "hi");
}
