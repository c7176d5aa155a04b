Feature: Commands reach the network only through the runtime's egress proxy
  With a network grant, a command's connections go through a proxy on loopback that the
  runtime runs for it and that judges every destination like an HttpRequest URL: the
  policy's allowed and blocked domains, then the address rules. The OS sandbox holds TCP to
  that proxy's port and forbids other sockets, so a command that ignores the proxy settings
  reaches nothing either. Judged from outside: a loopback listener that must not be reached.

  @REQ-HARD-056
  Scenario: a command reaches no host the policy does not admit, through the proxy or around it
    Given the policy grants Shell.Exec for the command "curl" only
    And the policy lets HttpRequest reach only "example.com"
    And a TCP listener on loopback
    And a running session
    And the model will run the shell command "curl -s -m 5 http://127.0.0.1:${LISTENER_PORT}/; curl -s -m 5 --noproxy '*' http://127.0.0.1:${LISTENER_PORT}/"
    And the model will then answer "Done."
    When the client starts the task "Fetch it."
    Then the loopback listener was never connected to

  @REQ-HARD-070 @posix-shell
  Scenario: the egress proxy refuses a request whose Host header names another host than the one judged
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the policy grants Shell.Exec for the command "curl" only
    And the policy lets HttpRequest reach only "127.0.0.1"
    And a TCP listener on loopback
    And a running session
    And the model will run the shell command "curl -s -m 2 http://127.0.0.1:${LISTENER_PORT}/judged; curl -s -m 2 -H 'Host: forbidden.example' http://127.0.0.1:${LISTENER_PORT}/other"
    And the model will then answer "Done."
    When the client starts the task "Fetch it twice."
    Then the loopback listener received one request, for "/judged"
