"""The embedded cluster: a deterministic, discrete-time simulation of an application
on a two-zone Kubernetes cluster, on a virtual clock."""
