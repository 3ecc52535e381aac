package e2e

import (
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// suiteOnPostgres gives every new workspace a fresh PostgreSQL database as
// its CAIRN_STORE: the end-to-end tests below run a second time with every
// area's state in PostgreSQL (one suite, two backends).
var suiteOnPostgres bool

// TestSuiteOnPostgres runs end-to-end tests of the task pipeline, the
// decision trail, the shared daemon, sessions, the protocol, the admin and
// sdd areas again, each on a fresh PostgreSQL database, with the same
// assertions as on bbolt, each workspace on a database of its own. Tests
// left out read or damage the data dir's files themselves (tampering,
// locked stores, TEST mode, the sdd state file) or run no area at all.
func TestSuiteOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the core end-to-end tests a second time on PostgreSQL; skipped with -short")
	}
	if _, err := pgtest.Binaries(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"TaskLifecycle", TestTaskLifecycle},
		{"TaskListAndNextActions", TestTaskListAndNextActions},
		{"NextActionsUsesTheProjectUsedLast", TestNextActionsUsesTheProjectUsedLast},
		{"TaskEventsAndProjectRegistrationByEvent", TestTaskEventsAndProjectRegistrationByEvent},
		{"ClaimRaceThroughSharedDaemon", TestClaimRaceThroughSharedDaemon},
		{"DecisionTrailEndToEnd", TestDecisionTrailEndToEnd},
		{"CallSucceedsAsD3Says", TestCallSucceedsAsD3Says},
		{"TypedErrorsFollowD3AndValidate", TestTypedErrorsFollowD3AndValidate},
		{"ProtocolErasOverStdio", TestProtocolErasOverStdio},
		{"ProtocolErasOverHTTP", TestProtocolErasOverHTTP},
		{"SessionsHaveTheirOwnSettings", TestSessionsHaveTheirOwnSettings},
		{"DaemonKilledLosesNoAcknowledgedWrite", TestDaemonKilledLosesNoAcknowledgedWrite},
		{"AdminToolsetOverStdio", TestAdminToolsetOverStdio},
		{"HTTPAuthorizationProof", TestHTTPAuthorizationProof},
		{"SddEvents", TestSddEvents},
		{"SddStateSurvivesRestart", TestSddStateSurvivesRestart},
		{"SessionDefaultProjectIsTheWorkspaceName", TestSessionDefaultProjectIsTheWorkspaceName},
		{"DaemonKilledThreeTimesWhileClientsWrite", TestDaemonKilledThreeTimesWhileClientsWrite},
		{"AdminPausedWebhookHoldsEventsAcrossRestart", TestAdminPausedWebhookHoldsEventsAcrossRestart},
		{"ReadOnlyModeCoreTools", TestReadOnlyModeCoreTools},
		{"IdentityFromAnUnwaitedInitialize", TestIdentityFromAnUnwaitedInitialize},
		{"CLIProjectListAndAuditExportWhileDaemonRuns", TestCLIProjectListAndAuditExportWhileDaemonRuns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suiteOnPostgres = true
			defer func() { suiteOnPostgres = false }()
			tc.fn(t)
		})
	}
}
