from django.urls import path

from arena.accounts import api

urlpatterns = [
    path("accounts/", api.SignupApi.as_view(), name="signup"),
    path("tokens/", api.TokenListCreateApi.as_view(), name="tokens"),
    path("tokens/<str:id>/", api.TokenDetailApi.as_view(), name="token"),
]
