"""The Argus language core: parse, analyze, lower to the tile IR. No pygls, torch or triton here."""
