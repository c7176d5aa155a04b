Feature: Crash recovery while an approval is pending
  A checkpoint taken while the user decides lists the pending approval; after a crash the
  interrupted step runs again from its model call and asks again (local-agent-host.md §9.2,
  §9.5, §10).

  @REQ-REC-013
  Scenario: a runtime killed while an approval is pending resumes the step and asks again
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    And the runtime asks for approval
    Then the checkpoint of the session holds the pending approval
    When the runtime process is killed
    And the client resumes the session
    And the client continues the incomplete task
    And the runtime asks for approval
    And the user approves the action
    Then the continued task completes with "The launch code is 4-8-15-16."
    And the ReadFile result of the first step reaches the model exactly once
    And every tool call in the model requests has its result
