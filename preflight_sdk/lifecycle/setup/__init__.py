"""Setup as a value pipeline: what is given and observed (`facts`), the plan (`plan`), carrying it out
(`execute`), and the resets of a kept environment between runs (`reset`). `up` runs the pipeline."""
