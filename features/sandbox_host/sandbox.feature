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

  @REQ-SBX-017
  Scenario: a download through a link that leads out of the workspace is refused
    Given the workspace holds a link "leak.txt" to a file outside it containing "registration secret 7731"
    And a sandbox registered with the Session Service
    When the client requests GET /files/leak.txt
    Then the answer is a refusal that does not hold "registration secret 7731"

  @REQ-SBX-018
  Scenario: an upload onto a link replaces the link and leaves the file outside untouched
    Given the workspace holds a link "target.txt" to a file outside it containing "precious"
    And a sandbox registered with the Session Service
    When the client uploads "target.txt" containing "uploaded words" to the sandbox
    Then the file outside the workspace behind "target.txt" still holds "precious"
    And the workspace's "target.txt" is a file of its own containing "uploaded words"

  @REQ-SBX-019
  Scenario: an upload through a linked folder that leads out of the workspace is refused
    Given the workspace holds a link "linked" to a folder outside it
    And a sandbox registered with the Session Service
    When the client uploads "linked/notes.txt" containing "words planted 5521" to the sandbox
    Then the answer is a refusal that does not hold "words planted 5521"
    And the folder outside the workspace is still empty

  @REQ-SBX-020
  Scenario: workspace.sync push does not send a file outside the workspace through a link
    Given the workspace holds a link "env.txt" to a file outside it containing "GATEWAY_TOKEN=gw-secret-1"
    And a sandbox registered with the Session Service
    When the Session Service sends workspace.sync push for "env.txt"
    Then the workspace.sync answer lists it as failed
    And the Workspace Service holds nothing for "env.txt"

  @REQ-SBX-021
  Scenario: workspace.sync pull onto a link replaces the link and leaves the file outside untouched
    Given the workspace holds a link "data.csv" to a file outside it containing "precious"
    And a sandbox registered with the Session Service
    And the Workspace Service holds the file "data.csv" containing "a,b,c"
    When the Session Service sends workspace.sync pull for "data.csv"
    Then the workspace.sync answer lists it as synced
    And the file outside the workspace behind "data.csv" still holds "precious"
    And the workspace's "data.csv" is a file of its own containing "a,b,c"

  @REQ-SBX-022
  Scenario: workspace.sync push redacts secrets as tool output is redacted
    Given the workspace file "out/keys.txt" contains "the key is sk-abcdefghijklmnopqrstuvwx"
    And a sandbox registered with the Session Service
    When the Session Service sends workspace.sync push for "out/keys.txt"
    Then the workspace.sync answer lists it as synced
    And the Workspace Service holds "out/keys.txt" without "sk-abcdefghijklmnopqrstuvwx"

  @REQ-SBX-023
  Scenario: a half-sent request head is closed after the head timeout
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_HEADER_TIMEOUT_SECONDS set to "1"
    And a sandbox registered with the Session Service
    When a client sends half a request head to the sandbox
    Then the sandbox closes that connection within 5 seconds

  @REQ-SBX-024
  Scenario: an /rpc body past the size limit is answered 413
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_RPC_MAX_BYTES set to "4096"
    And a sandbox registered with the Session Service
    When the client posts a JSON-RPC body of 65536 bytes to the sandbox
    Then the answer is HTTP 413

  @REQ-SBX-025
  Scenario: an upload past the size limit is answered 413 and writes nothing
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_UPLOAD_MAX_BYTES set to "4096"
    And a sandbox registered with the Session Service
    When the client uploads 65536 bytes as "big.bin" to the sandbox
    Then the answer is HTTP 413
    And the sandbox's workspace has no "big.bin"

  @REQ-SBX-026
  Scenario: a download of a large file that the client does not read stays in bounded memory
    Given the workspace file "huge.bin" is a sparse file of 1024 MiB
    And a sandbox registered with the Session Service
    When the client starts GET /files/huge.bin and does not read the body
    Then the sandbox's peak memory stayed under 256 MiB

  @REQ-SBX-027
  Scenario: an archive of a large file that the client does not read stays in bounded memory
    Given the workspace file "huge.bin" is a sparse file of 512 MiB
    And a sandbox registered with the Session Service
    When the client starts GET /files?archive=true and does not read the body
    Then the sandbox's peak memory stayed under 256 MiB

  @REQ-SBX-028
  Scenario: event readers that never read stay in bounded memory
    Given the runtime is started with AGENT_RUNTIME_EVENT_RING_SIZE set to "20000"
    And a sandbox registered with the Session Service
    And the model will say 48 KiB beside each of 4 ReadFile calls on "log.txt", then answer "Read it all."
    When the web app starts the task "Read log.txt four times." without a sessionId
    And the task finishes
    And 150 readers open the event stream and never read it
    Then the sandbox's peak memory stayed under 256 MiB

  @REQ-SBX-029
  Scenario: a sandbox that shuts down tells the Session Service its session ended
    Given a sandbox registered with the Session Service
    When the client sends Shutdown without params
    Then the Session Service no longer takes the sandbox's session as running

  @REQ-SBX-030
  Scenario: a task the web app recorded before starting it is completed, not created again
    Given a sandbox registered with the Session Service
    And the model will answer "Hello from the sandbox."
    When the web app records the task "Say hello." at the Session Service and starts it without a sessionId
    Then the task ends with task_completed
    And the Session Service recorded the task as completed with its step count
    And the Session Service was asked to create the task only once

  @REQ-SBX-031
  Scenario: connections past the sandbox's connection cap are closed at once
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_MAX_CONNECTIONS set to "8"
    And the runtime is started with AGENT_RUNTIME_SANDBOX_HEADER_TIMEOUT_SECONDS set to "60"
    And a sandbox registered with the Session Service
    When 20 clients open connections to the sandbox and send nothing
    Then the sandbox closes all but 8 of those connections within 5 seconds

  @REQ-SBX-032
  Scenario: workspace.sync push of a large file stays in bounded memory
    Given the runtime is started with AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS set to "30"
    And the workspace file "big.log" is a sparse file of 16 MiB
    And a sandbox registered with the Session Service
    When the Session Service sends workspace.sync push for "big.log"
    Then the sandbox's peak memory stayed under 48 MiB
    And the workspace.sync answer lists it as synced

  @REQ-SBX-033
  Scenario: workspace.sync pull of a large file stays in bounded memory
    Given a sandbox registered with the Session Service
    And the Workspace Service holds a file "big.bin" of 128 MiB
    When the Session Service sends workspace.sync pull for "big.bin"
    Then the sandbox's peak memory stayed under 64 MiB
    And the workspace.sync answer lists it as synced

  @REQ-SBX-034
  Scenario: an upload that keeps moving is taken whole, however long it takes
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_BODY_TIMEOUT_SECONDS set to "1"
    And a sandbox registered with the Session Service
    When the client uploads "slow.bin" to the sandbox in 8 pieces of 1024 bytes, one every 400 ms
    Then the answer is HTTP 201
    And the sandbox's workspace holds "slow.bin" of 8192 bytes

  @REQ-SBX-035
  Scenario: an upload that stops moving is answered 408 after the body timeout
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_BODY_TIMEOUT_SECONDS set to "1"
    And a sandbox registered with the Session Service
    When the client starts uploading 8192 bytes as "stalled.bin" to the sandbox and stops after 1024
    Then the upload is answered HTTP 408 within 10 seconds
    And the sandbox's workspace has no "stalled.bin"

  @REQ-SBX-036
  Scenario: a reader that stopped reading while the replay buffer overflowed is told of the gap
    Given the runtime is started with AGENT_RUNTIME_EVENT_RING_SIZE set to "8"
    And the runtime is started with AGENT_RUNTIME_SANDBOX_SEND_BUFFER_BYTES set to "8192"
    And a sandbox registered with the Session Service
    And the model will say 4 KiB beside each of 8 ReadFile calls on "log.txt", then answer "Read it all."
    When a reader with a 4 KiB receive buffer opens the event stream and stops reading
    And the web app starts the task "Read log.txt sixteen times." without a sessionId
    And the task finishes
    Then the stalled reader, reading again, is told of the gap and then gets the later events in order

  @REQ-SBX-037
  Scenario: a reader that fell further behind the live events than the backlog is dropped and misses nothing by reconnecting
    Given the runtime is started with AGENT_RUNTIME_SANDBOX_READER_BACKLOG set to "2"
    And the runtime is started with AGENT_RUNTIME_EVENT_RING_SIZE set to "10000"
    And the runtime is started with AGENT_RUNTIME_SANDBOX_SEND_BUFFER_BYTES set to "8192"
    And a sandbox registered with the Session Service
    And the model will say 4 KiB beside each of 8 ReadFile calls on "log.txt", then answer "Read it all."
    When a reader with a 4 KiB receive buffer opens the event stream and stops reading
    And the web app starts the task "Read log.txt sixteen times." without a sessionId
    And the task finishes
    Then the stalled reader, reading again, is dropped and, reconnecting from the last event it got, misses no event
