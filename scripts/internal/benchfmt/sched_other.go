//go:build !linux

package main

import (
	"errors"
	"time"
)

const (
	schedOther = 0
	schedFIFO  = 1
)

var errNotLinux = errors.New("scheduling policies and CPU affinity: Linux only")

func setScheduler(policy, prio int) error { return errNotLinux }

func coreSpeeds(time.Duration) ([]int, []float64, error) { return nil, nil, errNotLinux }
