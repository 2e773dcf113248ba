package chaos

import (
	"fmt"
	"os/exec"
)

// BuildSamsa builds the samsa command into out, with the race detector if
// race: the binary a campaign (Layout.Bin) and the end-to-end tests run.
func BuildSamsa(out string, race bool) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "github.com/samsa-kafka/samsa/cmd/samsa")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building samsa: %v\n%s", err, b)
	}
	return nil
}
