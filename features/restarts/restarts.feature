Feature: Sessions across app restarts
  The desktop app lists past sessions and continues one with ResumeSession {sessionId} sent to
  a freshly spawned runtime, which usually holds no checkpoint (the last quit was clean). After
  a crash it restarts the runtime and keeps naming the old session in StartTask and CancelTask.
  The Session Service keeps task records and the session's name for the app's sidebar; the
  Workspace Service keeps the history the app renders (INTEROP.md §8). The kit quits with
  Shutdown or kills with SIGKILL and starts a new process on the same CHECKPOINT_DIR.

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session

  @REQ-RST-001
  Scenario: Continue Conversation after a clean quit resumes the same session from its history
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the model will answer "You asked for the launch code."
    When the client continues the conversation of the session
    Then the conversation continues in the same session
    And the Session Service received a resume for the session
    When the client starts the task "What did I ask before?"
    Then the task ended with task_completed
    And the model received the earlier prompt "What is the launch code in notes.txt?"

  @REQ-RST-002
  Scenario: Continue Conversation of a session the service has ended continues in a new session
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Session Service considers the session expired
    And the model will answer "You asked for the launch code."
    When the client continues the conversation of the session
    Then the conversation continues in a new session that names the ended one
    When the client starts the task "What did I ask before?"
    Then the task ended with task_completed
    And the model received the earlier prompt "What is the launch code in notes.txt?"

  @REQ-RST-003
  Scenario: Shutdown with no task running leaves the session resumable at the service
    Given the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    And the client has shut the session down
    Then the Session Service received no cancel of the session

  @REQ-RST-004
  Scenario: Shutdown during a task cancels the session at the service with reason shutdown
    Given the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the client sends Shutdown without params
    Then the runtime reports task_cancelled and then session_cancelled
    And the Session Service received a cancel of the session with reason "shutdown"

  @REQ-RST-005
  Scenario: after a crash a task started with the old sessionId restores the session and runs
    Given the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    And the runtime process is killed
    And the model will answer "Hello again."
    When the client starts the task "Say hello again."
    Then the task ended with task_completed
    And the model received the earlier prompt "Say hello."

  @REQ-RST-006
  Scenario: after a crash CancelTask of the interrupted task ends it with task_cancelled
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client cancels the task
    Then the cancellation is acknowledged as cancelling the task
    And the task ended with task_cancelled

  @REQ-RST-007
  Scenario: a task is recorded at the Session Service when it starts and when it ends
    Given the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task ended with task_completed
    And the Session Service recorded the task as completed with its step count

  @REQ-RST-008
  Scenario: the session is named after its first prompt, cut on a word boundary
    Given the model will answer "Done."
    When the client starts the task "Please read the notes file in this project and tell me the launch code it holds"
    Then the task ended with task_completed
    And the Session Service named the session "Please read the notes file in this project and tell me the"

  @REQ-RST-009
  Scenario: a Session Service that refuses task records and names does not fail the task
    Given the model will answer "Hello."
    And the Session Service refuses task records and names
    When the client starts the task "Say hello."
    Then the task ended with task_completed

  @REQ-RST-010
  Scenario: the uploaded history renders in the app with tool cards and no empty bubbles
    Given the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task ended with task_completed
    And the session_history uploaded last renders as the app draws it, with the tool call and its result

  @REQ-RST-011
  Scenario Outline: a past conversation stored in the <form> form is read back for the model
    Given the Workspace Service holds a past conversation in the <form> form
    And the client has shut the session down
    And the model will answer "It was the launch code."
    When the client creates a session continuing the past conversation
    And the client starts the task "What did the file hold?"
    Then the task ended with task_completed
    And the model received the earlier prompt "What is in notes.txt?"
    And the model received the past tool call answered by its result

    Examples:
      | form   |
      | app    |
      | Python |
      | spec   |

  @REQ-RST-012
  Scenario: the patch preview names files relative to the project folder without an empty last line
    Given the model will write "The launch code is 4-8-15-16." into the workspace file "summary.md"
    And the model will then answer "Written."
    When the client starts the task "Write the summary."
    Then the task ended with task_completed
    When the client asks for the patch preview of the task
    Then the patch preview names "summary.md" relative to the project folder, its hunks ending without an empty line

  @REQ-RST-013
  Scenario: Continue Conversation that can neither resume nor continue says why and the runtime stays usable
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Session Service considers the session expired
    And the Workspace Service is down
    When the client continues the conversation of the session
    Then the runtime answers with an error
    And the error message is a readable sentence
    When the client creates a session
    Then CreateSession answers with the session the Session Service issued

  @REQ-RST-014
  Scenario: the session that continues an ended one presents the client the app first sent
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Session Service considers the session expired
    And the Session Service judges the client's versions as the real one does
    When the client continues the conversation of the session
    Then the runtime asked the Session Service for a new session to continue the ended one
    And the new session was created with the client's identity, capabilities and workspace
    And the conversation continues in a new session that names the ended one

  @REQ-RST-015
  Scenario: a task cut short by Shutdown is reported and recorded as ended by the shutdown
    Given the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the client sends Shutdown without params
    Then the task_cancelled event and the task record give the reason "shutdown"

  @REQ-RST-016
  Scenario: a session that continues an ended one keeps the ended one's name
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Session Service considers the session expired
    And the model will answer "You asked for the launch code."
    When the client continues the conversation of the session
    Then the conversation continues in a new session that names the ended one
    When the client starts the task "What did I ask before?"
    Then the task ended with task_completed
    And the Session Service named the session "What is the launch code in notes.txt?"

  @REQ-RST-017
  Scenario: requests naming the ended session are answered for the session that continues it
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Session Service considers the session expired
    And the model will answer "You asked for the launch code."
    When the client continues the conversation of the session
    Then the conversation continues in a new session that names the ended one
    When the client asks for the state of the ended session
    Then the state answered is the continuing session's
    When the client starts the task "What did I ask before?" naming the ended session
    Then the task ended with task_completed

  @REQ-RST-018
  Scenario: a history read back and saved again keeps its messages' ids
    Given the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the model will answer "You asked for the launch code."
    When the client continues the conversation of the session
    Then the conversation continues in the same session
    When the client starts the task "What did I ask before?"
    Then the task ended with task_completed
    And the history saved last keeps the ids the earlier history gave its messages

  @REQ-RST-018
  Scenario Outline: a history another client wrote in the <form> form, one message per call, keeps every id when read back and saved again
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Workspace Service holds the session's history in the <form> form, two calls in one turn
    And the model will answer "You asked what the project holds."
    When the client continues the conversation of the session
    Then the conversation continues in the same session
    When the client starts the task "What did I ask before?"
    Then the task ended with task_completed
    And the history saved last begins with the ids of the history the Workspace Service held

    Examples:
      | form   |
      | app    |
      | Python |

  @REQ-RST-019
  Scenario: after a crash, requests naming the ended session are answered for the session that continues it
    Given the model will answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end
    And the client has shut the session down
    And the Session Service considers the session expired
    And the model will answer "You asked for the launch code."
    When the client continues the conversation of the session
    Then the conversation continues in a new session that names the ended one
    When the client starts the task "What did I ask before?" naming the ended session
    Then the task ended with task_completed
    When the runtime process is killed
    And the client asks for the state of the ended session
    Then the state answered is the continuing session's
