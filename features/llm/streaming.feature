Feature: Reading the gateway's stream
  Tool calls arrive in fragments and are put together by index; the usage chunk at the end of
  the stream, or the runtime's own estimate, is reported when the call completes
  (local-agent-host.md §6.3; INTEROP.md §2).

  @REQ-LLM-004
  Scenario: two tool calls streamed as interleaved fragments are assembled whole
    Given the workspace file "a.txt" contains "Alpha"
    And the workspace file "b.txt" contains "Beta"
    And a running session
    And the model will call ReadFile on "a.txt" and on "b.txt" in one answer
    And the model will then answer "Alpha and Beta."
    When the client starts the task "Read a.txt and b.txt."
    Then the runtime reports both ReadFile calls, on "a.txt" and on "b.txt", whole

  @REQ-LLM-005
  Scenario: the gateway's usage is reported when the model call completes
    Given the gateway reports usage of 1234 prompt tokens and 56 completion tokens
    And a running session
    And the model will answer "Counted."
    When the client starts the task "Count something."
    And the task finishes
    Then llm_request_completed reports the policy's model with 1234 input tokens and 56 output tokens

  @REQ-LLM-006
  Scenario: without a usage chunk the token counts are estimated
    Given the gateway sends no usage
    And a running session
    And the model will answer "An answer long enough to be worth a few tokens of estimate."
    When the client starts the task "Estimate something."
    And the task finishes
    Then llm_request_completed reports estimated token counts
