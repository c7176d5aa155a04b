Feature: JSON-RPC framing over stdio
  The desktop app writes one JSON-RPC request per line to the runtime's stdin and reads one
  compact JSON object per line from its stdout (INTEROP.md §1). Whatever arrives, the runtime
  answers the way JSON-RPC 2.0 says and keeps serving.

  Background:
    Given the desktop app has started the runtime

  @REQ-RPC-003 @REQ-RPC-017
  Scenario: a line that is not JSON is answered with a parse error
    When the client sends the line '{"jsonrpc": "2.0", "id": 1, "method": '
    # judges @REQ-RPC-003
    Then the runtime answers with error -32700 and a null id
    # judges @REQ-RPC-017
    And the runtime still answers GetSessionState

  @REQ-RPC-004 @REQ-RPC-017
  Scenario: a line that is not valid UTF-8 is answered with a parse error
    When the client sends a line that is not valid UTF-8
    # judges @REQ-RPC-004
    Then the runtime answers with error -32700 and a null id
    # judges @REQ-RPC-017
    And the runtime still answers GetSessionState

  @REQ-RPC-005 @REQ-RPC-017
  Scenario Outline: a JSON value that is not a request is an invalid request (<shape>)
    When the client sends the line '<line>'
    # judges @REQ-RPC-005
    Then the runtime answers with error -32600
    # judges @REQ-RPC-017
    And the runtime still answers GetSessionState

    Examples:
      | shape                  | line                                                     |
      | no method              | {"jsonrpc": "2.0", "id": 1}                              |
      | method is not a string | {"jsonrpc": "2.0", "id": 1, "method": 7}                 |
      | wrong jsonrpc version  | {"jsonrpc": "1.0", "id": 1, "method": "GetSessionState"} |
      | no jsonrpc member      | {"id": 1, "method": "GetSessionState"}                   |
      | a bare string          | "GetSessionState"                                        |
      | a bare number          | 42                                                       |

  @REQ-RPC-005
  Scenario: a request whose id is an object is answered with a null id
    When the client sends the line '{"jsonrpc": "2.0", "id": {"n": 1}, "method": "GetSessionState"}'
    Then the runtime answers with error -32600 and a null id

  @REQ-RPC-006
  Scenario: an unknown method is answered with method not found
    When the client sends the line '{"jsonrpc": "2.0", "id": 1, "method": "LaunchRockets", "params": {}}'
    Then the runtime answers with error -32601

  @REQ-RPC-007
  Scenario Outline: the response echoes the request id with its JSON type (<kind>)
    When the client sends GetSessionState with id <id>
    Then the response carries the id <id>

    Examples:
      | kind                       | id          |
      | a number                   | 7           |
      | zero                       | 0           |
      | a negative number          | -12         |
      | a number beyond 32 bits    | 9007199254  |
      | a string of digits         | "7"         |
      | a string                   | "req_01"    |

  @REQ-RPC-008
  Scenario: a request without params is read as if params were {}
    Given a running session
    When the client sends the line '{"jsonrpc": "2.0", "id": 1, "method": "GetSessionState"}'
    Then the runtime answers with a result

  @REQ-RPC-009
  Scenario: a notification is not answered
    When the client sends the line '{"jsonrpc": "2.0", "method": "GetSessionState", "params": {}}'
    Then the runtime does not answer it

  @REQ-RPC-010
  Scenario: a batch is answered with one array of the responses to its requests
    Given a running session
    When the client sends the line '[{"jsonrpc": "2.0", "id": 1, "method": "GetSessionState"}, {"jsonrpc": "2.0", "method": "GetSessionState"}, {"jsonrpc": "2.0", "id": 2, "method": "LaunchRockets"}]'
    Then the runtime answers with a batch of 2 responses
    And the batch answers id 1 with a result
    And the batch answers id 2 with error -32601

  @REQ-RPC-010 @REQ-RPC-005
  Scenario: an invalid member of a batch gets its own invalid-request response
    Given a running session
    When the client sends the line '[{"jsonrpc": "2.0", "id": 1, "method": "GetSessionState"}, 42]'
    # judges @REQ-RPC-010
    Then the runtime answers with a batch of 2 responses
    # judges @REQ-RPC-010
    And the batch answers id 1 with a result
    # judges @REQ-RPC-005
    And the batch answers id null with error -32600

  @REQ-RPC-011
  Scenario: an empty batch is answered with a single invalid-request response
    When the client sends the line '[]'
    Then the runtime answers with error -32600 and a null id

  @REQ-RPC-012
  Scenario: a batch of notifications only gets no response
    When the client sends the line '[{"jsonrpc": "2.0", "method": "GetSessionState"}, {"jsonrpc": "2.0", "method": "GetSessionState"}]'
    Then the runtime does not answer it

  @REQ-RPC-001 @REQ-RPC-002
  Scenario: stdout carries only valid JSON-RPC messages
    Given a running session
    When the client sends the line '{"jsonrpc": "2.0", "id": 1, "method": "GetSessionState"}'
    # judges @REQ-RPC-002
    Then the runtime answers with a result
    # judges @REQ-RPC-001
    And every line the runtime wrote is a valid JSON-RPC message

  @REQ-RPC-013
  Scenario: a 10 MB request line is read and answered
    Given a running session
    And the model will answer "That is a long prompt."
    When the client starts a task whose prompt is 10 MB long
    Then the task is acknowledged as running
