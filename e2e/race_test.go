//go:build race

package e2e

// Under the race detector (go test -race, as scripts/test runs), the samsa
// processes are race-built too, and a race one of them reports fails the
// test that started it (proc.checkRaces).
func init() { raceBuild = true }
