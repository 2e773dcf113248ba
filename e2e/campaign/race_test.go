//go:build race

package campaign

// Under the race detector (go test -race, as scripts/test runs) the samsa
// processes are race-built too, and a race one of them reports counts as a
// violation (the campaign scans every log).
func init() { raceBuild = true }
