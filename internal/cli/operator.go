package cli

import (
	"fmt"
	"os"

	"github.com/omnigraph-go/omnigraph/internal/opconfig"
)

// operator loads the operator config once per invocation, printing its
// warnings (unknown keys) to stderr.
func (a *app) operator() (*opconfig.Config, error) {
	if a.opcfg != nil {
		return a.opcfg, nil
	}
	home, err := opconfig.Home(os.Getenv)
	if err != nil {
		return nil, err
	}
	c, warnings, err := opconfig.Load(home)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(a.io.Err, "warning: "+w)
	}
	a.opcfg = c
	return c, nil
}

// actor is --as, else operator.actor, else "".
func (a *app) actor() (string, error) {
	if a.g.as != "" {
		return a.g.as, nil
	}
	c, err := a.operator()
	if err != nil {
		return "", err
	}
	return c.Operator.Actor, nil
}
