"""The files a clarification writes and reads: ADRs, the task and its archives, the architecture
state projection, their UIDs and markdown, written safely (`files`) and read in one go (`state`)."""
