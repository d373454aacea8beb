"""One module per rendered artifact; each turns a resolved vendor into
template contexts. All generated text lives in deeplink_gen/templates/."""
