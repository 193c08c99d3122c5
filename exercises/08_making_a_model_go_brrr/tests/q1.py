from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(n_params, flops_per_token_small, flops_per_token_large, gpt2_flops_per_token, gpt2_attention_crossover):
    import numbers
    for value in (n_params, flops_per_token_small, flops_per_token_large, gpt2_flops_per_token, gpt2_attention_crossover):
        assert isinstance(value, numbers.Real) and (not isinstance(value, bool)) and (value > 0), 'counts are positive numbers'
    assert flops_per_token_large > flops_per_token_small, "attention's term grows with the sequence length, so longer sequences cost more per token"

