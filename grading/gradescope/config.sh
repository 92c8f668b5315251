# What the Gradescope autograder grades; read by setup.sh and run_autograder.
# LABS: the lab folders of this assignment, empty for all (e.g. LABS="02-call-rcu").
# PRIOR: "own" links the student's own earlier labs; "solutions" grades each
# lab on its own, with the reference for the earlier labs.
LABS="${LABS:-}"
PRIOR="${PRIOR:-own}"
