Feature: Requests the state machines refuse
  One process serves one session, and a session runs one task at a time. A request that does
  not fit the current state is refused with a readable error, and whatever was running goes
  on (local-agent-host.md §3.1, §3.3, §3.4, §4.3; INTEROP.md §1).

  @REQ-LOOP-001 @REQ-RPC-016
  Scenario: StartTask while a task runs is refused, naming the running task
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the client tries to start the task "Something else, please."
    # judges @REQ-LOOP-001
    Then the request fails with error code "INVALID_REQUEST"
    # judges @REQ-LOOP-001
    And the error message names the running task
    # judges @REQ-RPC-016
    And the error message is a readable sentence

  @REQ-LOOP-001
  Scenario: the running task goes on after a refused StartTask
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the client tries to start the task "Something else, please."
    And the model finishes its answer
    Then the task goes on to complete

  @REQ-LOOP-002
  Scenario Outline: <method> for a session the runtime does not serve fails with SESSION_NOT_FOUND (<case>)
    Given <situation>
    When <request> in the session "sess_not_served_here"
    Then the request fails with error code "SESSION_NOT_FOUND"
    And the error message is a readable sentence

    Examples:
      | method     | case                   | situation                               | request                                           |
      | StartTask  | it serves another one  | a running session                       | the client tries to start the task "Hello there." |
      | StartTask  | no session created yet | the desktop app has started the runtime | the client tries to start the task "Hello there." |
      | CancelTask | it serves another one  | a running session                       | the client cancels a task                         |
      | CancelTask | no session created yet | the desktop app has started the runtime | the client cancels a task                         |

  @REQ-LOOP-003
  Scenario: CancelTask with no task running is refused
    Given a running session
    When the client cancels the task
    Then the request fails with error code "INVALID_REQUEST"
    And the error message is a readable sentence

  @REQ-LOOP-003
  Scenario: CancelTask naming a task that has already finished is refused
    Given a running session that has completed a task
    When the client cancels the task
    Then the request fails with error code "INVALID_REQUEST"
    And the error message is a readable sentence

  @REQ-LOOP-004
  Scenario: CancelTask naming another task is refused, naming the running one
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the client cancels the task "task_somebody_else"
    And the model finishes its answer
    Then the request fails with error code "INVALID_REQUEST"
    And the error message names the running task
    And the task goes on to complete

  @REQ-LOOP-005
  Scenario: a second CreateSession in the same process is refused
    Given a running session
    When the client creates a session
    Then the request fails with error code "INVALID_REQUEST"
    And the error message is a readable sentence

  @REQ-LOOP-006
  Scenario: StartTask after Shutdown has begun is refused
    Given the runtime is started with AGENT_RUNTIME_SERVICE_RETRY_DELAY_SECONDS set to "0.5"
    And the Workspace Service answers 503 to every request
    And a running session
    When the client sends Shutdown without params
    And the client tries to start the task "One more thing."
    Then the request fails with error code "INVALID_REQUEST"
    And the error message names "shutting down"

  @REQ-LOOP-007 @REQ-RPC-014
  Scenario: StartTask with an empty prompt is refused as invalid params
    Given a running session
    When the client tries to start the task ""
    Then the runtime answers with error -32602
    # judges @REQ-LOOP-007
    And the error message names "prompt"
    # judges @REQ-RPC-014
    And the error data code is "INVALID_REQUEST"

  @REQ-LOOP-008 @REQ-RPC-014
  Scenario Outline: StartTask with taskOptions.maxSteps <maxSteps> is refused as invalid params
    Given a running session
    When the client tries to start the task "Read everything." with taskOptions.maxSteps <maxSteps>
    Then the runtime answers with error -32602
    # judges @REQ-LOOP-008
    And the error message names "taskOptions.maxSteps"
    # judges @REQ-RPC-014
    And the error data code is "INVALID_REQUEST"

    Examples:
      | maxSteps |
      | 0        |
      | -3       |

  @REQ-LOOP-009
  Scenario: StartTask reusing the taskId of a finished task is refused
    Given a running session
    And the model will answer "All done."
    And the client has run the task "Say you are done." to its end
    When the client tries to start the task "Say you are done." with the finished task's taskId
    Then the request fails with error code "INVALID_REQUEST"
    And the error message is a readable sentence
