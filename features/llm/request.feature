Feature: Requests to the LLM Gateway
  The runtime speaks OpenAI Chat Completions streaming to the gateway and builds each request
  from the thread and the policy; it offers the model only the tools the policy lets it use
  (local-agent-host.md §6.1, §6.2; INTEROP.md §2).

  @REQ-LLM-001
  Scenario: every model request asks for usage, begins with the system prompt and sends text contents
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then every model request asks for usage in the stream
    And every model request begins with a system message
    And every message of every model request has string content

  @REQ-LLM-002
  Scenario: the headers of LLM_GATEWAY_HEADERS ride on every model request
    Given the runtime is started with the extra gateway header "X-Tenant-Route" set to "eu-west-1"
    And a running session
    And the model will answer "Hello there."
    When the client starts the task "Say hello."
    And the task finishes
    Then every model request carries the header "X-Tenant-Route" with "eu-west-1"

  @REQ-LLM-003
  Scenario Outline: ReadFile is offered to the model only when the policy grants File.Read
    Given <policy>
    And a running session
    And the model will answer "Hello there."
    When the client starts the task "Say hello."
    And the task finishes
    Then the model <offered> offered ReadFile as a function tool

    Examples:
      | policy                              | offered |
      | the policy grants File.Read         | is      |
      | the policy does not grant File.Read | is not  |
