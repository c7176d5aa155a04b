Feature: The system prompt
  The runtime builds the system prompt once per session from the agent persona, tool guidance,
  the workspace paths and the OS family (local-agent-host.md §6.2), so the model knows where it
  works and which commands the machine understands.

  @REQ-LLM-019
  Scenario: the system prompt names the project folder and the OS family in every request
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then every model request's system prompt names the project folder and the OS family
