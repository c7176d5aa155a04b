Feature: The Sandbox Agent Host behind the Session Service
  In the web design the same runtime runs in a cloud sandbox: the Session Service launches it,
  the sandbox registers itself and receives its session, and the service's proxy relays the
  browser's JSON-RPC and event stream to it without credentials (INTEROP.md §9). These
  scenarios run over `--transport sandbox`, where the kit plays the Session Service.

  @REQ-SBX-001
  Scenario: the sandbox registers itself and serves the session of the answer
    Given a sandbox registered with the Session Service
    Then the sandbox registered its endpoint, its task and the registration token
    And GetSessionState without a sessionId names the registered session
    And the Session Service holds no session but the provisioned one

  @REQ-SBX-002
  Scenario: a refused registration stops the sandbox with a readable reason
    Given the sandbox is launched with a registration token the Session Service did not issue
    When the sandbox starts
    Then the sandbox stops with a readable registration failure

  @REQ-SBX-003
  Scenario: a registration the Session Service could not take is tried again
    Given the Session Service answers the next 3 requests with HTTP 503
    And a sandbox registered with the Session Service
    Then the registration reached the Session Service at least 2 times
    And GetSessionState without a sessionId names the registered session

  @REQ-SBX-004
  Scenario: a task started without a sessionId runs in the sandbox's session
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a sandbox registered with the Session Service
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the web app starts the task "What is the launch code in notes.txt?" without a sessionId
    Then the task ends with task_completed

  @REQ-SBX-005
  Scenario: a proxied CreateSession opens no second session at the Session Service
    Given a sandbox registered with the Session Service
    When the web app sends CreateSession through the proxy
    Then the CreateSession answer names the registered session or is a readable error
    And the Session Service holds no session but the provisioned one

  @REQ-SBX-006
  Scenario: two readers of the event stream both receive every event, framed with its id
    Given a sandbox registered with the Session Service
    And the model will answer "Hello from the sandbox."
    When a second reader opens the event stream
    And the web app starts the task "Say hello." without a sessionId
    Then every reader received every event of the task, framed with its id

  @REQ-SBX-007
  Scenario: a reader that reconnects with Last-Event-ID gets exactly the events after it
    Given a sandbox registered with the Session Service
    And the model will answer "Hello again."
    When the web app starts the task "Say hello again." without a sessionId
    And the task finishes
    And a reader reconnects with the Last-Event-ID of the task's first event
    Then the reconnected reader received exactly the events after that id

  @REQ-SBX-008
  Scenario: closing an event stream does not end the session
    Given a sandbox registered with the Session Service
    And the model will answer "Still here."
    When a reader opens the event stream and closes it
    And the web app starts the task "Are you still there?" without a sessionId
    Then the task ends with task_completed

  @REQ-SBX-009
  Scenario: the sandbox answers its health and readiness checks
    Given a sandbox registered with the Session Service
    When the client requests GET /health
    Then the answer is HTTP 200
    When the client requests GET /ready
    Then the answer names the session as ready

  @REQ-SBX-010
  Scenario: the workspace's files are listed, downloaded and archived
    Given the workspace file "report.txt" contains "quarterly numbers"
    And a sandbox registered with the Session Service
    When the client requests GET /files
    Then the file list holds "report.txt" of 17 bytes, with the totals
    When the client requests GET /files/report.txt
    Then the answer's body is "quarterly numbers"
    When the client requests GET /files?archive=true
    Then the answer is a zip archive holding "report.txt"

  @REQ-SBX-011
  Scenario: an upload lands in the sandbox's workspace
    Given a sandbox registered with the Session Service
    When the client uploads "upload.txt" containing "uploaded words" to the sandbox
    Then the answer is HTTP 201
    And the sandbox's workspace holds "upload.txt" containing "uploaded words"

  @REQ-SBX-012
  Scenario: workspace.sync pull copies the Workspace Service's file into the workspace
    Given a sandbox registered with the Session Service
    And the Workspace Service holds the file "data/input.csv" containing "a,b,c"
    When the Session Service sends workspace.sync pull for "data/input.csv"
    Then the workspace.sync answer lists it as synced
    And the sandbox's workspace holds "data/input.csv" containing "a,b,c"

  @REQ-SBX-013
  Scenario: workspace.sync push copies a workspace file to the Workspace Service
    Given the workspace file "out/result.txt" contains "done"
    And a sandbox registered with the Session Service
    When the Session Service sends workspace.sync push for "out/result.txt"
    Then the workspace.sync answer lists it as synced
    And the Workspace Service holds "out/result.txt" containing "done"

  @REQ-SBX-014
  Scenario: the sandbox records its task at the Session Service when it ends
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a sandbox registered with the Session Service
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the web app starts the task "What is the launch code in notes.txt?" without a sessionId
    Then the task ends with task_completed
    And the Session Service recorded the task as completed with its step count

  @REQ-SBX-015
  Scenario: a reader that reconnects after its events fell out of the replay buffer is told so
    Given the runtime is started with AGENT_RUNTIME_EVENT_RING_SIZE set to "2"
    And a sandbox registered with the Session Service
    And the model will answer "Hello again."
    When the web app starts the task "Say hello again." without a sessionId
    And the task finishes
    And a reader reconnects with the Last-Event-ID of the task's first event
    Then the reconnected reader is told that events were lost, then gets the events still kept

  @REQ-SBX-016
  Scenario: a sandbox starts with the files its workspace already holds
    Given the Workspace Service already holds the file "docs/readme.txt" containing "uploaded before the sandbox ran" for the sandbox's workspace
    And a sandbox registered with the Session Service
    Then the sandbox's workspace holds "docs/readme.txt" containing "uploaded before the sandbox ran"
