//go:build !linux && !darwin

package service

import "context"

const unitName = "zeroclaw.service"

func defaultUnitDir(home string) string { return home }

func render(Options) (string, error) { return "", ErrUnsupported }

func afterInstall(context.Context, Options) []string { return nil }

func beforeUninstall(context.Context, Options, string) []string { return nil }

func afterUninstall(context.Context, Options) []string { return nil }

func manage(context.Context, Options, string, string) (string, error) { return "", ErrUnsupported }
