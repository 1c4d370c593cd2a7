//go:build !linux

package main

import "errors"

const (
	schedOther = 0
	schedFIFO  = 1
)

var errNotLinux = errors.New("scheduling policies and CPU affinity: Linux only")

func setScheduler(policy, prio int) error { return errNotLinux }

type pinner struct{ cpus []int }

func newPinner() (*pinner, error) { return nil, errNotLinux }

func (p *pinner) pin(int) error { return errNotLinux }

func (p *pinner) restore() error { return errNotLinux }
