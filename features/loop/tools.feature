Feature: Tool calls the loop processes
  Tool failures go into the thread so the model can correct itself; several calls in one
  answer come back in the model's order (local-agent-host.md §4.2, §4.6, §11; INTEROP.md §2).

  Background:
    Given a running session

  @REQ-LOOP-021
  Scenario: a call to a tool the runtime does not have fails with TOOL_NOT_FOUND
    Given the model will call the tool "LaunchRockets" with the arguments "{}"
    And the model will then answer "I cannot launch rockets."
    When the client starts the task "Launch the rockets."
    Then the tool call fails with errorCode "TOOL_NOT_FOUND"

  @REQ-LOOP-021
  Scenario: the model is told the tool does not exist
    Given the model will call the tool "LaunchRockets" with the arguments "{}"
    And the model will then answer "I cannot launch rockets."
    When the client starts the task "Launch the rockets."
    Then the next model request answers the call with a tool message naming "TOOL_NOT_FOUND"

  @REQ-LOOP-022
  Scenario: a call whose arguments are not JSON fails with INVALID_REQUEST and the model is told
    Given the model will call the tool "ReadFile" with the arguments "{\"path\": "
    And the model will then answer "Sorry, my arguments were broken."
    When the client starts the task "Read something."
    Then the tool call fails with errorCode "INVALID_REQUEST"
    And the next model request answers the call with a tool message naming "INVALID_REQUEST"

  @REQ-LOOP-023
  Scenario: several calls in one answer come back in the model's order
    Given the workspace file "alpha.txt" contains "Alpha is the first letter, and this file is the longest of the three by far."
    And the workspace file "bravo.txt" contains "Bravo comes second."
    And the workspace file "charlie.txt" contains "Charlie."
    And the model will read "charlie.txt", "alpha.txt" and "bravo.txt" in one answer
    And the model will then answer "I have read all three."
    When the client starts the task "Read the three files."
    Then the next model request carries the results of "charlie.txt", "alpha.txt" and "bravo.txt" in the call order
