Feature: Errors a person can read
  The desktop app never branches on error codes: it shows error.message to the user. So every
  error carries a readable sentence, the JSON-RPC integer code, and the spec's string code in
  error.data (INTEROP.md §1, architecture.md §6.5).

  Background:
    Given the desktop app has started the runtime

  @REQ-RPC-014 @REQ-RPC-015 @REQ-RPC-016
  Scenario Outline: params of the wrong shape are refused naming the field (<problem>)
    When the client sends the line '<request>'
    # judges @REQ-RPC-014
    Then the runtime answers with error -32602
    # judges @REQ-RPC-014
    And the error message names "<field>"
    # judges @REQ-RPC-014 @REQ-RPC-015
    And the error data code is "INVALID_REQUEST"
    # judges @REQ-RPC-015
    And the error is not retryable
    # judges @REQ-RPC-016
    And the error message is a readable sentence

    Examples:
      | problem                     | field    | request                                                                                                                 |
      | prompt is a number          | prompt   | {"jsonrpc": "2.0", "id": 1, "method": "StartTask", "params": {"sessionId": "sess_1", "prompt": 42}}                     |
      | userId is missing           | userId   | {"jsonrpc": "2.0", "id": 1, "method": "CreateSession", "params": {"tenantId": "tenant_1"}}                              |
      | maxSteps is not a number    | maxSteps | {"jsonrpc": "2.0", "id": 1, "method": "StartTask", "params": {"sessionId": "sess_1", "prompt": "hi", "taskOptions": {"maxSteps": "many"}}} |
      | sessionId is missing        | sessionId | {"jsonrpc": "2.0", "id": 1, "method": "StartTask", "params": {"prompt": "hi"}}                                         |

  @REQ-RPC-014
  Scenario: params given by position are invalid params
    When the client sends the line '{"jsonrpc": "2.0", "id": 1, "method": "StartTask", "params": ["sess_1", "hello"]}'
    Then the runtime answers with error -32602
    And the error data code is "INVALID_REQUEST"
