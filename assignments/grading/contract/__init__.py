"""What an assignment gives the engine: its exercises (Exercise), the Assignment it is an
instance of, its seeded cases (Recipe, Shape), its catalog of mistakes (Mistake) and the
protocols its loops follow. Rule: imports nothing of the engine but shipped/ (the students'
checks, which the contract's derived properties load); strictly typed (mypy --strict)."""
