"""What operators touch: the invocation, the tools and their policy, the workspace, the operators and agents."""
