"""The transformations: each assignment classified once (``operations``), reverse mode
(``reverse*``) and forward mode (``forward``) writing their derivatives from the rules
(``expand``), the tape and control flow (``control_flow``), calls of the user's code
(``callees``, ``weights``)."""
