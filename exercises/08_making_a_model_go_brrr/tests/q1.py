from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(n_params, flops_per_token_small, flops_per_token_large, gpt2_flops_per_token, gpt2_attention_crossover):
    from brrr.grade.context import positive
    import numbers
    for name, value in (('n_params', n_params), ('flops_per_token_small', flops_per_token_small), ('flops_per_token_large', flops_per_token_large), ('gpt2_flops_per_token', gpt2_flops_per_token), ('gpt2_attention_crossover', gpt2_attention_crossover)):
        positive(name, value)
    assert flops_per_token_large > flops_per_token_small, "attention's term grows with the sequence length, so longer sequences cost more per token"

