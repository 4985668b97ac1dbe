"""The optional language model (`assist`): its providers over HTTP and the redaction applied first."""
