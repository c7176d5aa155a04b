Feature: Statements of the Local Agent Host found by the spec walk
  What the line-by-line walk of local-agent-host.md and INTEROP.md found uncertified
  (features/walk/local-agent-host.toml and INTEROP.toml): how a session ends, a session
  without a project folder, token accounting, the output limit of a request, the guardrail
  note, tool dispatch after the whole answer, history uploads of tasks that did not
  complete, a failing call among parallel ones, unknown capabilities in a bundle, expiry
  before a model call and the refreshed bundle of a crash recovery.

  @REQ-SES-100
  Scenario: Shutdown of a paused session ends it cancelled
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the client has run the task "Are you there?" to its end
    When the client sends Shutdown without params
    Then the runtime reports session_cancelled for the session
    And the runtime exits with code 0

  @REQ-SES-101
  Scenario: session_completed counts the session's tasks and tokens
    Given the gateway reports usage of 100 prompt tokens and 20 completion tokens
    And a running session
    And the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    When the client sends Shutdown without params
    Then session_completed counts 1 task and 120 tokens

  @REQ-SES-102
  Scenario: a general chat without a project folder runs a task
    Given the model will answer "Hello there."
    When the client creates a session without a project folder
    Then the session is running with the ids the Session Service issued
    When the client starts the task "Say hello."
    Then the task_completed result is "Hello there."

  @REQ-LLM-100
  Scenario: model requests ask for the policy's output token limit
    Given a running session
    And the model will answer "Short answer."
    When the client starts the task "Answer briefly."
    Then the task_completed result is "Short answer."
    And every model request asks for at most 4000 output tokens

  @REQ-LLM-101
  Scenario: GetSessionState reports the tokens the gateway counted and the session budget
    Given the gateway reports usage of 100 prompt tokens and 20 completion tokens
    And a running session
    And the model will answer "Counted."
    And the client has run the task "Count my tokens." to its end
    When the client asks for the session state
    Then the session state reports 120 session tokens used of 250000

  @REQ-LLM-102
  Scenario: after a guardrail block the model is told on the next attempt
    Given a running session
    And the gateway answers the next request with status 400 and the error "unsafe content"
    And the client has run the task "Say something unsafe." to its end
    And the model will answer "Something kind."
    When the client starts another task "Say something kind."
    Then the new task's first model request tells the model the earlier request was blocked

  @REQ-LOOP-100
  Scenario: a task that fails at its step limit still uploads the session history
    Given a running session
    And the model will call ReadFile on "notes.txt" in every answer
    When the client starts the task "Keep reading notes.txt." with taskOptions.maxSteps 2
    Then the task fails with error code "MAX_STEPS_EXCEEDED"
    And the session history saved last holds "Keep reading notes.txt." in order

  @REQ-LOOP-100
  Scenario: a cancelled task still uploads the session history
    Given a running session
    And the model will begin answering "Let me think" and then pause
    When the client starts the task "Think hard about it."
    And the model has begun streaming its answer
    And the client cancels the task
    Then the task ends with task_cancelled as its only terminal event
    And the session history saved last holds "Think hard about it." in order

  @REQ-LOOP-101
  Scenario: a failing tool call does not affect the other calls of the same answer
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call these tools in one answer:
      | tool     | arguments                              |
      | ReadFile | {"path": "${WORKSPACE}/missing.txt"} |
      | ReadFile | {"path": "${WORKSPACE}/notes.txt"}   |
    And the model will then answer "One file was missing."
    When the client starts the task "Read both files."
    Then the next model request carries the tool results "FILE_NOT_FOUND" and "4-8-15-16" in the call order
    And the task_completed result is "One file was missing."

  @REQ-LOOP-102
  Scenario: tool calls are dispatched only after the model's whole answer
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Read it."
    When the client starts the task "Read notes.txt."
    Then every tool call of the task is requested only after the model's answer is complete

  @REQ-POL-100
  Scenario: capabilities the runtime does not know are ignored, never fatal
    Given the policy also grants Code.Execute
    And the policy also grants Search.Web
    And the policy also grants Browser.Navigate
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The code is 4-8-15-16."
    When the client starts the task "What is in notes.txt?"
    Then the ReadFile call runs and returns "4-8-15-16"
    And the task_completed result is "The code is 4-8-15-16."

  @REQ-POL-101
  Scenario: a policy that expired before the model call stops the call and pauses the session
    Given the Session Service serves policies that expire 0.5 seconds after they are served
    And a running session
    And the model will answer "Too late."
    When the policy the session was served has expired
    And the client starts the task "Are you there?"
    Then the task fails recoverably with error code "POLICY_EXPIRED"
    And the runtime reports policy_expired
    And the session is paused
    And the gateway received no request

  @REQ-REC-100
  Scenario: a refreshed policy bundle that fails validation refuses the crash recovery
    Given a running session
    When the runtime process is killed
    Given the Session Service issues a policy bundle for another session
    When the client resumes the session
    Then the request fails with error code "POLICY_BUNDLE_INVALID"
    And the error message is a readable sentence

  @REQ-SES-103
  Scenario: a FastAPI validation error of the Session Service is told in words
    Given the Session Service answers the next request with FastAPI's validation error "field required" for the field "tenantId"
    When the client creates a session
    Then the request fails with error code "INVALID_REQUEST"
    And the error message names "field required"
    And the error message names "tenantId"
    And the error message quotes no JSON

  @REQ-RPC-100
  Scenario: unknown fields are ignored and null members count as absent
    Given the desktop app has started the runtime
    When the client sends the line '{"jsonrpc": "2.0", "id": 1, "method": "CreateSession", "params": {"userId": "user_conformance", "tenantId": "tenant_conformance", "executionEnvironment": null, "workspaceHint": null, "clientInfo": null, "supportedCapabilities": null, "continueFromSessionId": null, "uiTheme": "dark", "futureOptions": {"beta": true}}}'
    Then the runtime answers with a result

  @REQ-LLM-103
  Scenario: a model stream that goes silent past the idle timeout is retried whole
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "0.25"
    And a running session
    And the model will begin answering "Let me" and then pause
    And the model will answer "Here I am."
    When the client starts the task "Are you there?"
    Then the task_completed result is "Here I am."
    And the runtime reports llm_retry for the first retry
    And the last model request carries the prompt exactly once

  @REQ-REC-101
  Scenario: a crash recovery that cannot reach the Session Service keeps the checkpoint for a retry
    Given the runtime is started with AGENT_RUNTIME_SERVICE_RETRIES set to "0"
    And a running session
    When the runtime process is killed
    Given the Session Service answers 503 to the next 1 request
    When the client resumes the session
    Then the request fails with error code "SERVICE_UNAVAILABLE"
    And the error is retryable
    When the client resumes the session
    Then the session runs again

  @REQ-LOOP-103
  Scenario: a paused session starts no task until it is resumed
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the client has run the task "Are you there?" to its end
    When the client tries to start the task "Something else, please."
    Then the request fails with error code "INVALID_REQUEST"
    And the error message names "ResumeSession"
    And the gateway received exactly 2 requests

  @REQ-REC-102
  Scenario: a session paused by the gateway survives a crash with its incomplete task
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the client has run the task "Are you there?" to its end
    When the runtime process is killed
    And the client resumes the session
    And the client asks for the session state
    Then the session runs again
    And the session state reports the session as SESSION_RUNNING
    And the session state offers the task as incomplete with its prompt

  @REQ-REC-103
  Scenario: the session's token count survives a crash
    Given the gateway reports usage of 100 prompt tokens and 20 completion tokens
    And a running session
    And the model will answer "Counted."
    And the client has run the task "Count my tokens." to its end
    When the runtime process is killed
    And the client resumes the session
    And the client asks for the session state
    Then the session state reports 120 session tokens used of 250000

  @REQ-POL-102
  Scenario: without a project folder a relative allowedPaths entry admits no file
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "I may not read it."
    When the client creates a session without a project folder
    And the client starts the task "What is in notes.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "4-8-15-16"

  @REQ-POL-103
  Scenario: DeleteFile is held to the File.Delete paths
    Given the policy grants File.Delete under "." but blocks "keep/"
    And the workspace file "keep/precious.txt" contains "do not delete"
    And a running session
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/keep/precious.txt"}
      """
    And the model will then answer "I may not delete it."
    When the client starts the task "Delete keep/precious.txt."
    Then the DeleteFile call is denied and the workspace file "keep/precious.txt" still contains "do not delete"

  @REQ-POL-103
  Scenario: DeleteFile outside the File.Delete paths is denied
    Given the policy grants File.Delete under "scratch" but blocks ".env"
    And the workspace file "notes.txt" contains "keep me"
    And a running session
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/notes.txt"}
      """
    And the model will then answer "I may not delete it."
    When the client starts the task "Delete notes.txt."
    Then the DeleteFile call is denied and the workspace file "notes.txt" still contains "keep me"

  @REQ-LLM-104
  Scenario: by default a failing gateway call is retried at most 3 times
    Given a running session
    And the LLM Gateway answers 503 to the next 10 requests
    When the client starts the task "Are you there?"
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    And the gateway received exactly 4 requests

  @REQ-REC-104
  Scenario: resuming a paused session that the Session Service calls expired deletes its checkpoint
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the client has run the task "Are you there?" to its end
    And the Session Service considers the session expired
    When the client resumes the session
    Then the request fails with error code "SESSION_EXPIRED"
    And the error message is a readable sentence
    And the checkpoint of the session is gone

  @REQ-CAN-100
  Scenario: Shutdown while a tool call waits for approval cancels it and ends the session
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the runtime asks for approval
    And the client sends Shutdown without params
    Then the runtime reports approval_resolved with decision "cancelled"
    And the runtime reports task_cancelled and then session_cancelled
    And the runtime exits with code 0
    And no model request contains "4-8-15-16"

  @REQ-CAN-101
  Scenario: a task cancelled while it waits to retry the model ends at once
    Given a running session
    And the gateway answers the next request with status 429 and Retry-After "30"
    When the client starts the task "Are you there?"
    And the client cancels the task once the model has received its request
    Then the task ends with task_cancelled as its only terminal event
    And the gateway received exactly 1 request

  @REQ-LLM-105
  Scenario: an upstream provider's error body is read for its message
    Given a running session
    And the gateway answers the next request with status 400 and the upstream error "prompt violates the content policy"
    When the client starts the task "Hello?"
    Then the task fails with error code "LLM_GUARDRAIL_BLOCKED"
    And the task_failed message names "prompt violates the content policy"
    And the task_failed message quotes no JSON
