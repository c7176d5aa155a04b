Feature: A slow Session Service call does not hold up other requests
  The desktop app gives CreateSession and ResumeSession 60 s and every other request 30 s
  (INTEROP.md §1): while the runtime waits on the Session Service, it keeps answering.

  @REQ-SES-021
  Scenario: GetSessionState is answered while CreateSession waits on a slow Session Service
    Given the Session Service is slow by 1 s
    When the client creates a session without waiting for the answer
    Then the runtime answers GetSessionState before it answers that CreateSession
