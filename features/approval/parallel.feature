Feature: Other tool calls go on while one waits for approval
  The loop suspends only the tool call that needs approval; the other calls of the same answer
  run (local-agent-host.md §10.2, §4.2).

  @REQ-APR-009
  Scenario: a call that needs no approval completes while another waits for its approval
    Given the policy requires approval for File.Write under the rule "Write a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will write "draft.txt" and read "notes.txt" in one answer
    And the model will then answer "Done."
    When the client starts the task "Draft something and read notes.txt."
    And the runtime asks for approval
    Then the ReadFile call completes while the WriteFile call waits for approval
