Feature: Parallel tool results keep the call order
  Approved tools of one answer run concurrently; whatever order they finish in, their results
  enter the thread in the order the model made the calls (local-agent-host.md §4.2). The
  first command waits for a file the kit creates only once the second call's result has been
  reported, so the first always finishes last.

  @REQ-LOOP-028
  Scenario: results enter the thread in call order when the calls finish in reverse order
    Given the policy also grants Shell.Exec
    And a running session
    And the model will call these tools in one answer:
      | tool       | arguments                                                                                  |
      | RunCommand | {"command": "for i in $(seq 600); do [ -e release ] && break; sleep 0.05; done; echo result-one", "command@windows": "(for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo result-one", "timeout": 30} |
      | RunCommand | {"command": "echo result-two", "command@windows": "echo result-two"} |
    And the model will then answer "Both commands ran."
    And the client has started the task "Run both commands."
    When the runtime has reported the result of call 2
    And the user creates the workspace file "release"
    Then the tool calls complete in the reverse of the call order
    And every tool call of the task succeeds
    And the next model request carries the tool results "result-one" and "result-two" in the call order
